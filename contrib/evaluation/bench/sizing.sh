#!/bin/bash
# contrib/evaluation/bench/sizing.sh - how much one host sends: series, values per
# interval and bytes on the wire, measured on a typical host. A benchmark:
# it prints figures, it never fails on a number (not in make check).
#
#   bash contrib/evaluation/bench/sizing.sh          # about 3 minutes
#
# The host: a collectd with Interval 10 and diskprobe at its defaults (the
# default probe set, ProbeInterval 60, DutyCycle 2, Splay), two Path targets
# on two disks (ext4 on loop devices) and DeviceStats for four disks (those
# two and two more), plus the read plugins most hosts load anyway (cpu,
# memory, load, interface, disk, df), reported apart. It sends every value
# twice, through the network plugin: in clear text (SecurityLevel None) to a
# counting socket, and encrypted (SecurityLevel Encrypt) through a counting
# relay to a central collectd that decrypts them, writes RRD files (rrdtool)
# and serves them on write_prometheus. Counted over WINDOW seconds (two
# probe rounds) after WARMUP: UDP payload bytes and packets of each stream,
# value lists and values by plugin and interval (the clear-text packets
# parsed), RRD files written and series on /metrics.
#
# Environment: WINDOW [120], WARMUP [15], BASE (the other read plugins;
# BASE= for diskprobe alone) [cpu memory load interface disk df], top_builddir (where the plugin is
# built) [the tree], KEEP_TMP=1 to keep the files. Needs root (loop
# devices, mounts), collectd (collectd-core), curl, python3.
set -o pipefail # not -e: lib.sh helpers return non-zero by design
here=$(cd "$(dirname "$0")" && pwd)
: "${top_srcdir:=$(cd "$here/../../.." && pwd)}"
# shellcheck source=../../../tests/shell/lib.sh
. "$top_srcdir/tests/shell/lib.sh"
: "${WINDOW:=120}" "${WARMUP:=15}" "${BASE=cpu memory load interface disk df}"
need root loop
need_collectd
need_cmd curl
HOST=sizing-host

d=$(make_tmpdir)
echo "sizing: setting up four loop devices, two with ext4 (the targets), in $d" >&2
devs=()
for i in 1 2 3 4; do
  devs+=("$(make_loop 96 "$d")") || exit 1
done
for i in 1 2; do make_fs "${devs[$((i - 1))]}" "$d/mnt$i"; done
names=()
for dev in "${devs[@]}"; do names+=("\"${dev#/dev/}\""); done

# The central collectd: the network plugin decrypting (an AuthFile with the
# fleet's user), rrdtool and write_prometheus.
srv="$d/central"
mkdir -p "$srv"
collectd_dir "$srv"
port=$((20000 + RANDOM % 20000)) prom=$((40000 + RANDOM % 20000))
printf 'sizing: sizing-secret\n' >"$srv/auth"
{
  collectd_conf_head "$srv" 10 | sed 's/^Hostname .*/Hostname "central"/'
  cat <<CONF
LoadPlugin network
<Plugin network>
  <Listen "127.0.0.1" "$port">
    SecurityLevel Encrypt
    AuthFile "$srv/auth"
  </Listen>
</Plugin>
LoadPlugin write_prometheus
<Plugin write_prometheus>
  Port "$prom"
</Plugin>
CONF
} >"$srv/collectd.conf"

# The counter: a clear-text socket and an encrypted relay to the central.
cnt="$d/count.json"
python3 "$here/sizing.py" --ports-file "$d/ports" --relay-to "$port" \
  --start "$WARMUP" --window "$WINDOW" --out "$cnt" &
counter=$!
register_pid "$counter"
wait_until 10 test -s "$d/ports" || die "the counter did not start"
read -r plain enc <"$d/ports"

# The host.
cli="$d/host"
mkdir -p "$cli"
collectd_dir "$cli"
for p in $BASE; do cp "/usr/lib/collectd/$p.so" "$cli/plugins/"; done
{
  collectd_conf_head "$cli" 10 | sed -e "s/^Hostname .*/Hostname \"$HOST\"/" \
    -e '/^LoadPlugin rrdtool/,/^<\/Plugin>/d'
  for p in $BASE; do
    echo "LoadPlugin $p"
    # this host's four disks and three filesystems only, not the loop
    # devices and mounts of whatever else runs on the machine
    case $p in
    disk) printf '<Plugin disk>\n  Disk %s\n</Plugin>\n' "${names[*]}" ;;
    df) printf '<Plugin df>\n  MountPoint "/"\n  MountPoint "%s"\n  MountPoint "%s"\n</Plugin>\n' "$d/mnt1" "$d/mnt2" ;;
    esac
  done
  cat <<CONF
LoadPlugin network
<Plugin network>
  Server "127.0.0.1" "$plain"
  <Server "127.0.0.1" "$enc">
    SecurityLevel Encrypt
    Username "sizing"
    Password "sizing-secret"
  </Server>
</Plugin>
LoadPlugin diskprobe
<Plugin diskprobe>
  DeviceStats ${names[*]}
  <Target "data1">
    Path "$d/mnt1/diskprobe"
    FileSize "64M"
  </Target>
  <Target "data2">
    Path "$d/mnt2/diskprobe"
    FileSize "64M"
  </Target>
</Plugin>
CONF
} >"$cli/collectd.conf"

collectd_start "$srv"
srv_pid=$COLLECTD_PID
collectd_start "$cli"
cli_pid=$COLLECTD_PID
echo "sizing: host and central collectd running; counting for ${WINDOW}s after ${WARMUP}s" >&2
wait "$counter" || die "the counter failed"
_unregister_pid "$counter"
curl -sf "http://127.0.0.1:$prom/metrics" >"$d/metrics" || die "write_prometheus does not answer"
collectd_stop "$cli_pid" >/dev/null
collectd_stop "$srv_pid" >/dev/null
grep -iE 'error|fail' "$srv/collectd.log" "$cli/collectd.log" | grep -v 'diskprobe plugin: .*health' | head -5 >&2 || true

SRC_REV=$(git -C "$top_srcdir" describe --always --dirty 2>/dev/null) BASE=$BASE python3 - "$cnt" "$srv/rrd/$HOST" "$d/metrics" "$HOST" "$WINDOW" <<'PY'
import glob, json, os, sys, time
cnt, rrd, metrics, host, window = sys.argv[1:6]
c = json.load(open(cnt))
window = float(window)
per10 = 10.0 / window   # one collectd Interval (10 s)
print("sizing: %s, diskprobe source %s" % (time.strftime(
    "%Y-%m-%d %H:%M UTC", time.gmtime()), os.environ.get("SRC_REV", "?")))
print("sizing: one host, Interval 10, diskprobe defaults (ProbeInterval 60), "
      "2 targets, device view of 4 disks; others: %s; counted over %.0f s" % (
          os.environ.get("BASE") or "none", window))
print()
rrds = glob.glob(os.path.join(rrd, "*", "*.rrd"))
dp_rrd = sum(1 for r in rrds if os.path.basename(os.path.dirname(r)).startswith("diskprobe"))
lines = [l for l in open(metrics) if not l.startswith("#") and
         'instance="%s"' % host in l]
dp_prom = sum(1 for l in lines if l.startswith("collectd_diskprobe_"))
dp_rrd_b = sum(os.path.getsize(r) for r in rrds if os.path.basename(
    os.path.dirname(r)).startswith("diskprobe"))
all_rrd_b = sum(os.path.getsize(r) for r in rrds)
dp_prom_b = sum(len(l) for l in lines if l.startswith("collectd_diskprobe_"))
all_prom_b = sum(len(l) for l in lines)
print("%-44s %10s %10s %10s" % ("", "diskprobe", "others", "all"))
print("%-44s %10d %10d %10d" % ("RRD files (central rrdtool)", dp_rrd,
                                len(rrds) - dp_rrd, len(rrds)))
print("%-44s %10.1f %10.1f %10.1f" % ("  their size on disk, MiB", dp_rrd_b / 2**20,
                                      (all_rrd_b - dp_rrd_b) / 2**20, all_rrd_b / 2**20))
print("%-44s %10d %10d %10d" % ("series on /metrics (write_prometheus)",
                                dp_prom, len(lines) - dp_prom, len(lines)))
ser = c["series"]
dpv = c["ds_per_series"]
print("%-44s %10.1f %10.1f %10.1f" % ("  their lines on /metrics, KiB", dp_prom_b / 1024,
                                      (all_prom_b - dp_prom_b) / 1024, all_prom_b / 1024))
print("%-44s %10d %10d %10d" % ("value lists seen (identifiers)",
                                ser.get("diskprobe", 0),
                                sum(ser.values()) - ser.get("diskprobe", 0),
                                sum(ser.values())))
print("%-44s %10d %10d %10d" % ("  their data sources (values each time)",
                                dpv.get("diskprobe", 0),
                                sum(dpv.values()) - dpv.get("diskprobe", 0),
                                sum(dpv.values())))
print()
print("values received, by plugin and the interval they carry (per %.0f s, "
      "and per 10 s Interval):" % window)
tot = {"dp": 0, "all": 0}
for k in sorted(c["by"]):
    v = c["by"][k]
    print("  %-28s %5d value lists %6d values  %7.1f values per 10 s" % (
        k, v["value_lists"], v["values"], v["values"] * per10))
    tot["all"] += v["values"]
    if k.startswith("diskprobe@"):
        tot["dp"] += v["values"]
print("  %-28s %32s %7.1f values per 10 s (diskprobe %.1f)" % (
    "total", "", tot["all"] * per10, tot["dp"] * per10))
print()
print("on the wire (UDP payload; + 28 bytes IPv4/UDP header per packet):")
for s in ("plain", "encrypted"):
    x = c["streams"][s]
    b10 = x["bytes"] * per10
    print("  %-10s %6d packets %9d bytes (largest %4d): %7.0f bytes per 10 s "
          "(%.0f with headers), %.2f packets per 10 s, %.1f bytes per value" % (
              s, x["packets"], x["bytes"], x["max"], b10,
              b10 + 28 * x["packets"] * per10, x["packets"] * per10,
              x["bytes"] / tot["all"] if tot["all"] else 0))
p, e = c["streams"]["plain"], c["streams"]["encrypted"]
if p["bytes"]:
    print("  encrypted/plain bytes: %.3f" % (e["bytes"] / p["bytes"]))
if c["bad_parts"]:
    print("  (%d unparsable parts in the clear-text stream)" % c["bad_parts"])
PY
