#!/bin/bash
# contrib/evaluation/fleet/fleet_scale.sh - how many hosts one central
# collectd carries, cold start and steady state, with the fleet-server.conf
# shipped before (old) and the one shipped now (new: no write_prometheus),
# side by side. A
# benchmark: it prints figures, it never fails on a number (not in make check).
#
#   bash contrib/evaluation/fleet/fleet_scale.sh     # about 20-23 minutes
#
# Each step (a host count, a configuration) starts a central collectd with
# an empty DataDir and the drop-in as it ships but for what the measurement
# needs (below), then collectd's traffic generator, collectd-tg, as the whole
# fleet cold-starting at once: HOSTS hosts, VALUES (95) value lists per host,
# one value each, every 10 s, spread over PLUGINS (4) plugin directories per
# host, all on 127.0.0.1. fleet_scale.py samples the central every 10 s for
# STEP seconds: RRD files created, the write queue (GETVAL of collectd's
# internal stats over the unixsock plugin), its CPU and RSS, the generated
# hosts' series on write_prometheus' /metrics and how long the page takes,
# the kernel's UDP receive-buffer drops; at the end, the RRD files written
# in the last CacheTimeout + RandomTimeout + 20 s. Then it stops both,
# deletes the RRD tree and goes on; the report prints the table and the
# knee (the largest host count each configuration kept up with, per core).
#
# What differs from the shipped drop-ins, for the measurement only:
#   - unencrypted: collectd-tg cannot encrypt (the SecurityLevel and
#     AuthFile lines are dropped); the network plugin listens on 127.0.0.1
#     and a free port, write_prometheus on 127.0.0.1 and a free port;
#   - the central's Hostname is "central", DataDir a temporary directory,
#     and it loads unixsock and sets CollectInternalStats (the sampler's
#     view of the write queue; the new drop-in sets the latter itself);
#   - the rrdtool cache is scaled to CACHE_TIMEOUT (60 s; shipped 300 s):
#     CacheTimeout, RandomTimeout and CacheFlush times CACHE_TIMEOUT/300, so
#     that a step sees two cache flushes (steady state) in STEP seconds.
#
# The central runs in a pids cgroup with pids.max TASKS_MAX (4096), as a
# systemd service has TasksMax (15 % of the kernel's pid_max by default):
# CreateFilesAsync starts a thread per missing file, and a cold start of
# thousands of hosts would otherwise take every pid of the machine. How
# often the limit refused a thread is printed per step.
#
# CONFIGS may add "withprom": the new drop-in with its four commented
# write_prometheus lines loaded (what a small fleet may do), and
# "rrdcached": the new drop-in with collectd's rrdcached
# plugin in place of rrdtool, through an rrdcached daemon (-w/-z/-f as the
# scaled CacheTimeout/RandomTimeout/CacheFlush; installed when missing).
#
# Environment: HOSTS ["300 600 1000"], CONFIGS ["old new"], STEP [172: two
# cache flushes and 30 s of steady state], CACHE_TIMEOUT [60], VALUES [95],
# PLUGINS [4], LIMIT [1400: no step starts that would end later, in seconds
# from the start], OUT [a directory for the per-step JSON and logs; a
# temporary one by default, deleted], KEEP_TMP=1 to keep everything.
# Needs root (apt-get for collectd-utils when collectd-tg is missing), collectd
# (collectd-core), python3. Everything it starts it stops, by pid.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=$(cd "$here/../../.." && pwd)
: "${HOSTS:=300 600 1000}" "${CONFIGS:=old new}" "${CACHE_TIMEOUT:=60}"
: "${VALUES:=95}" "${PLUGINS:=4}" "${LIMIT:=1400}" "${TASKS_MAX:=4096}"
: "${STEP:=$((2 * CACHE_TIMEOUT + 2 * CACHE_TIMEOUT / 5 + 28))}"
say() { echo "fleet_scale: $*" >&2; }
die() { say "$*"; exit 1; }
start=$SECONDS

# ---- what it needs -----------------------------------------------------------
command -v collectd >/dev/null || die "collectd not installed (Debian: collectd-core)"
command -v python3 >/dev/null || die "python3 not installed"
missing=()
command -v collectd-tg >/dev/null || missing+=(collectd-utils)
[[ " $CONFIGS " == *" rrdcached "* ]] && ! command -v rrdcached >/dev/null && missing+=(rrdcached)
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || die "${missing[*]} missing; run as root to install"
  say "installing ${missing[*]}"
  policy=/usr/sbin/policy-rc.d made_policy=0
  if [ ! -e "$policy" ]; then # no package script starts a service
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && made_policy=1
  fi
  apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 \
      --no-install-recommends "${missing[@]}" >/dev/null
  }
  apt_install || { apt-get update -qq && apt_install; }
  [ "$made_policy" = 1 ] && rm -f "$policy"
  command -v collectd-tg >/dev/null || die "could not install collectd-utils"
fi

# ---- cleanup: only what this script started ---------------------------------
work=$(mktemp -d /var/tmp/fleet-scale.XXXXXX) || die "no temporary directory"
# SETTLE: seconds between a deleted RRD tree and the next step. ext4 without
# a journal passes over inodes freed in the last ~35 s when it allocates new
# ones (the previous step's tree would slow this step's file creation, which
# a real cold start does not see); with a journal (jbd2) no pause is needed.
dev=$(findmnt -no SOURCE -T "$work" 2>/dev/null)
if [ -z "${SETTLE:-}" ]; then
  SETTLE=35
  compgen -G "/proc/fs/jbd2/${dev##*/}-*" >/dev/null && SETTLE=0
fi
: "${OUT:=$work/out}"
mkdir -p "$OUT"
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  for p in /sys/fs/cgroup/pids/fleet-scale-"$$"-* /sys/fs/cgroup/fleet-scale-"$$"-*; do
    [ -d "$p" ] && rmdir "$p" 2>/dev/null
  done
  if [ -z "${KEEP_TMP:-}" ]; then rm -rf "$work"; else say "kept $work"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
forget() { local i; for i in "${!pids[@]}"; do [ "${pids[$i]}" = "$1" ] && unset "pids[$i]"; done; }
# stop PID SECONDS: SIGTERM, then SIGKILL after SECONDS; prints the seconds waited.
stop() {
  local pid=$1 t=$SECONDS
  kill -TERM "$pid" 2>/dev/null
  while kill -0 "$pid" 2>/dev/null && [ $((SECONDS - t)) -lt "$2" ]; do sleep 0.2; done
  kill -KILL "$pid" 2>/dev/null && say "pid $pid still running after $2 s: killed"
  wait "$pid" 2>/dev/null
  forget "$pid"
  echo $((SECONDS - t))
}

# ---- the two drop-ins ---------------------------------------------------------
# old: contrib/examples/fleet-server.conf as shipped up to diskprobe a1df8fa.
old_dropin() {
  cat <<'CONF'
LoadPlugin network
<Plugin network>
  <Listen "0.0.0.0" "25826">
    SecurityLevel Encrypt
    AuthFile "/etc/collectd/fleet-auth"
  </Listen>
</Plugin>
LoadPlugin rrdtool
<Plugin rrdtool>
  DataDir "/var/lib/collectd/rrd"
</Plugin>
LoadPlugin write_prometheus
<Plugin write_prometheus>
  Port "9103"
</Plugin>
CONF
}
new_dropin() { cat "$top_srcdir/contrib/examples/fleet-server.conf"; }
# rrdonly: the new drop-in without write_prometheus (Prometheus scraping
# the members themselves): what the RRD files alone cost the central; the
# same as new since new ships without it.
rrdonly_dropin() { new_dropin | sed '/^LoadPlugin write_prometheus$/,/^<\/Plugin>$/d'; }
# withprom: the new drop-in with its commented write_prometheus block on.
withprom_dropin() { new_dropin | sed -E '/^#LoadPlugin write_prometheus$/,/^#<\/Plugin>$/s/^#//'; }
# rrdcached: the new drop-in with the rrdcached plugin instead of rrdtool,
# writing through an rrdcached daemon that caches as the new drop-in's
# rrdtool does (started by step; its socket is $d/rrdcached.sock).
rrdcached_dropin() {
  new_dropin | sed -E -e 's/^LoadPlugin rrdtool$/LoadPlugin rrdcached/' \
    -e 's/^<Plugin rrdtool>$/<Plugin rrdcached>\n  DaemonAddress "unix:@D@\/rrdcached.sock"/' \
    -e '/^[[:space:]]*(CacheTimeout|RandomTimeout|CacheFlush)[[:space:]]/d'
}

# central_conf DIR CONFIG PORT PROM: DIR/collectd.conf, the drop-in CONFIG
# made fit for the measurement (see the header).
central_conf() {
  local d=$1 cfg=$2 port=$3 prom=$4 s=$((CACHE_TIMEOUT))
  cat >"$d/collectd.conf" <<CONF
Hostname "central"
FQDNLookup false
BaseDir "$d"
PIDFile "$d/collectd.pid"
TypesDB "/usr/share/collectd/types.db"
TypesDB "$top_srcdir/plugin/diskprobe.types.db"
Interval 10
CollectInternalStats true
LoadPlugin logfile
<Plugin logfile>
  LogLevel info
  File "$d/collectd.log"
  Timestamp true
</Plugin>
LoadPlugin unixsock
<Plugin unixsock>
  SocketFile "$d/sock"
</Plugin>
CONF
  "${cfg}_dropin" | sed -E \
    -e "s|<Listen \"0.0.0.0\" \"25826\">|<Listen \"127.0.0.1\" \"$port\">|" \
    -e '/^[[:space:]]*(SecurityLevel|AuthFile)[[:space:]]/d' \
    -e "s|DataDir \"/var/lib/collectd/rrd\"|DataDir \"$d/rrd\"|" -e "s|@D@|$d|" \
    -e "s|^([[:space:]]*)Port \"9103\"|\1Port \"$prom\"\n\1Host \"127.0.0.1\"|" \
    -e "s|^([[:space:]]*CacheTimeout) ([0-9]+)|echo \"\1 \$((\2 * $s / 300))\"|e" \
    -e "s|^([[:space:]]*RandomTimeout) ([0-9]+)|echo \"\1 \$((\2 * $s / 300))\"|e" \
    -e "s|^([[:space:]]*CacheFlush) ([0-9]+)|echo \"\1 \$((\2 * $s / 300))\"|e" \
    >>"$d/collectd.conf"
}

# pids_cgroup NAME: a pids cgroup (v1 or v2) with pids.max TASKS_MAX,
# printed; nothing if there is none (then the central runs unlimited).
pids_cgroup() {
  local base
  for base in /sys/fs/cgroup/pids /sys/fs/cgroup; do
    [ -f "$base/cgroup.procs" ] || continue
    [ "$base" = /sys/fs/cgroup/pids ] || grep -qw pids "$base/cgroup.subtree_control" 2>/dev/null || continue
    mkdir -p "$base/fleet-scale-$$-$1" 2>/dev/null && echo "$TASKS_MAX" >"$base/fleet-scale-$$-$1/pids.max" &&
      { echo "$base/fleet-scale-$$-$1"; return; }
  done
}

# ---- one step -----------------------------------------------------------------
# step CONFIG HOSTS: runs it; writes $OUT/CONFIG-HOSTS.json.
step() {
  local cfg=$1 h=$2 d="$work/$1-$2" n=$(($2 * VALUES)) port prom cpid tpid waited left cg refused rpid='' metrics
  local t0=$SECONDS
  [ -n "$deleted_at" ] && [ $((SECONDS - deleted_at)) -lt "$SETTLE" ] && sleep $((SETTLE - (SECONDS - deleted_at)))
  mkdir -p "$d/rrd"
  port=$((20000 + RANDOM % 20000))
  prom=$((port + 1))
  central_conf "$d" "$cfg" "$port" "$prom"
  metrics=
  grep -q '^LoadPlugin write_prometheus' "$d/collectd.conf" && metrics="http://127.0.0.1:$prom/metrics"
  collectd -t -C "$d/collectd.conf" >"$d/check.out" 2>&1 || die "collectd -t refused $cfg: $(cat "$d/check.out")"
  cp "$d/collectd.conf" "$OUT/$cfg-$h.conf"
  if [ "$cfg" = rrdcached ]; then # its cache scaled as rrdtool's (see the header)
    rrdcached -g -l "unix:$d/rrdcached.sock" -b "$d/rrd" -B -p "$d/rrdcached.pid" \
      -w "$CACHE_TIMEOUT" -z "$((CACHE_TIMEOUT / 5))" -f "$((CACHE_TIMEOUT * 3))" >"$d/rrdcached.out" 2>&1 &
    pids+=("$!")
    rpid=$!
    for _ in $(seq 50); do [ -S "$d/rrdcached.sock" ] && break; sleep 0.2; done
  fi
  cg=$(pids_cgroup "$cfg-$h")
  # shellcheck disable=SC2016 # $$ is the inner shell's, which execs collectd
  sh -c '[ -z "$1" ] || echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$cg" \
    collectd -f -C "$d/collectd.conf" >"$d/collectd.out" 2>&1 &
  cpid=$!
  pids+=("$cpid")
  for _ in $(seq 50); do [ -S "$d/sock" ] && break; sleep 0.2; done
  [ -S "$d/sock" ] || die "the central ($cfg) did not start: $(tail -3 "$d/collectd.log" "$d/collectd.out")"
  say "$cfg, $h hosts ($n value lists per 10 s), $STEP s"
  collectd-tg -n "$n" -H "$h" -p "$PLUGINS" -i 10 -d 127.0.0.1 -D "$port" >/dev/null 2>"$d/tg.err" &
  tpid=$!
  pids+=("$tpid")
  python3 "$here/fleet_scale.py" sample --pid "$cpid" --tg-pid "$tpid" ${rpid:+--also-pid "$rpid"} --sock "$d/sock" \
    --rrd "$d/rrd" --metrics "$metrics" --values "$n" --hosts "$h" \
    --config "$cfg" --duration "$STEP" --steady-from "$((STEP - 30))" \
    --fresh-within "$((CACHE_TIMEOUT + CACHE_TIMEOUT / 5 + 20))" --out "$OUT/$cfg-$h.json"
  waited=$(stop "$tpid" 10)
  waited=$(stop "$cpid" 20)
  [ -n "$rpid" ] && stop "$rpid" 20 >/dev/null
  if [ -n "$cg" ]; then
    refused=$(sed -n 's/^max //p' "$cg/pids.events" 2>/dev/null)
    say "$cfg, $h hosts: threads refused at the task limit ($TASKS_MAX): ${refused:-?}"
    echo "${refused:-}" >"$OUT/$cfg-$h.refused"
    rmdir "$cg" 2>/dev/null
  fi
  left=$(sed -n 's/.*plugin: \([0-9]*\) value lists* w[a-z]* left after shutting down.*/\1/p' "$d/collectd.log" | tail -1)
  say "$cfg, $h hosts: collectd stopped in $waited s; value lists left in the queue at the stop: ${left:-0 (or not logged)}"
  # the commonest warnings and errors, numbers and file names folded
  grep -iE 'warn|error|fail' "$d/collectd.log" | sed -E 's/^\[[^]]*\] //; s/"[^"]*"/"..."/g; s/[0-9]+/N/g' |
    sort | uniq -c | sort -rn | head -3 | sed 's/^/    log: /' >&2
  gzip -c "$d/collectd.log" >"$OUT/$cfg-$h.log.gz"
  rm -rf "$d"
  sync
  deleted_at=$SECONDS
  say "$cfg, $h hosts: step done in $((SECONDS - t0)) s"
}

deleted_at=
say "hosts: $HOSTS; configurations: $CONFIGS; $STEP s per step, $SETTLE s between, CacheTimeout $CACHE_TIMEOUT s; results in $OUT"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for h in $HOSTS; do
  for cfg in $CONFIGS; do
    if [ $((SECONDS - start + STEP + SETTLE + 30)) -gt "$LIMIT" ]; then
      say "skipping $cfg at $h hosts: it would end after LIMIT ($LIMIT s)"
      continue
    fi
    step "$cfg" "$h"
  done
done
echo
echo "fleet_scale: $(date -u '+%Y-%m-%d %H:%M UTC'), collectd $(dpkg-query -W -f='${Version}' collectd-core 2>/dev/null)," \
  "$(nproc) cores (load average $load0 before, $(cut -d' ' -f1-3 /proc/loadavg) after), $((SECONDS - start)) s; HOSTS=\"$HOSTS\" STEP=$STEP CACHE_TIMEOUT=$CACHE_TIMEOUT VALUES=$VALUES PLUGINS=$PLUGINS"
echo
compgen -G "$OUT/*.json" >/dev/null || die "no step ran"
python3 "$here/fleet_scale.py" report "$OUT"/*.json
