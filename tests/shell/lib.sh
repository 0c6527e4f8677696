# tests/shell/lib.sh - shared helpers for the shell tests: results and
# skipping, number comparisons, polling with deadlines, loop devices and
# filesystems, block I/O throttling (cgroup v1 blkio or cgroup v2 io.max),
# collectd (config, start, stop,
# config check, log lines) and RRD files. Source it; every resource it makes
# is released by cleanup, the EXIT trap it installs.
#
# Exit codes follow automake: 0 pass, 1 fail, 77 skip.
# Deadlines here only keep a broken run from hanging: they are generous and
# never an assertion about speed (the test machines are shared and noisy).

: "${top_builddir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
DISKPROBE="$top_builddir/src/cli/diskprobe"
# The plugin runs each target's I/O in this build's prober program, not an
# installed one (tests/shell/deb_package.sh unsets it to test the package's).
export DISKPROBE_PROBER="$top_builddir/src/cli/diskprobe-prober"
PLUGIN_SO="$top_builddir/plugin/.libs/diskprobe.so"
# Where cgroups are looked for (CGROUP_ROOT, for the helpers' self-test a
# fake tree): v1 blkio at $CGROUP_ROOT/blkio, else a v2 unified hierarchy at
# $CGROUP_ROOT or $CGROUP_ROOT/unified (hybrid hosts). See cg_detect.
: "${CGROUP_ROOT:=/sys/fs/cgroup}"
BLKIO=$CGROUP_ROOT/blkio
COLLECTD_HOST=diskprobe-test
FAILED=0 PASSED=0

# ---- cleanup ---------------------------------------------------------------
# Resources are recorded in a registry file, not in shell arrays: the
# make_* helpers run in command substitutions (subshells), whose variables
# the test's own shell never sees. Processes are kept in _pids (they are
# started in the test's own shell, the only one that can wait for them).
_REG=$(mktemp /tmp/diskprobe-test-reg.XXXXXX)
_pids=() _mounts=() _at_exit=()
cleanup() {
  local p kind
  for p in "${_at_exit[@]}"; do eval "$p"; done
  for p in "${_pids[@]}"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done
  for p in "${_pids[@]}"; do [ -n "$p" ] && wait "$p" 2>/dev/null; done
  for p in "${_mounts[@]}"; do umount -l "$p" 2>/dev/null; done
  # the newest mount first: a mount inside another one goes before it
  tac "$_REG" | while read -r kind p; do [ "$kind" = mount ] && umount -l "$p" 2>/dev/null; done
  while read -r kind p; do [ "$kind" = loop ] && losetup -d "$p" 2>/dev/null; done <"$_REG"
  while read -r kind p; do
    [ "$kind" = cgroup ] && [ -f "$p/cgroup.procs" ] || continue
    # move any straggler back to the parent group (v1: the blkio root; v2:
    # the unified root, which may hold processes) before removing
    while read -r pid; do echo "$pid" >"${p%/*}/cgroup.procs"; done <"$p/cgroup.procs" 2>/dev/null
    # a fake tree (the self-test) holds plain files; cgroupfs removes its own
    case $(stat -f -c %T "$p" 2>/dev/null) in cgroup*) ;; *) rm -f "$p"/* ;; esac
    rmdir "$p" 2>/dev/null
  done <"$_REG"
  # v2: the io controller we enabled in a parent's subtree_control is
  # disabled again, unless another test's cgroup is still there
  while read -r kind p; do
    [ "$kind" = cgroup-io ] || continue
    compgen -G "$p/diskprobe-test-*" >/dev/null || echo -io >"$p/cgroup.subtree_control" 2>/dev/null
  done <"$_REG"
  if [ -z "${KEEP_TMP:-}" ]; then
    while read -r kind p; do [ "$kind" = dir ] && rm -rf "$p"; done <"$_REG"
  fi
  rm -f "$_REG"
  return 0
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP # a killed test cleans up too

# at_exit CMD: a shell command cleanup runs first (call it in the test's shell).
at_exit() { _at_exit+=("$1"); }
# register_pid PID: cleanup kills and reaps PID.
register_pid() { _pids+=("$1"); }
_unregister_pid() { local i; for i in "${!_pids[@]}"; do [ "${_pids[$i]}" = "$1" ] && unset "_pids[$i]"; done; }
# register_mount DIR: cleanup unmounts DIR (lazily).
register_mount() { echo "mount $1" >>"$_REG"; }

# ---- results ---------------------------------------------------------------
# In a command substitution (a make_* helper) these print to stderr, and
# exit leaves only the subshell: call those as `x=$(make_loop ...) || exit`.
_say() { if [ "$BASHPID" = "$$" ]; then echo "$*"; else echo "$*" >&2; fi; }
# skip WHY: exit 77, unless a check already failed (then the test fails).
skip() {
  _say "SKIP: $*"
  [ "$FAILED" = 0 ] || { _say "FAIL: $FAILED check(s) failed before the skip"; exit 1; }
  exit 77
}
fail() { _say "FAIL: $*"; FAILED=$((FAILED + 1)); }
pass() { echo "ok: $*"; PASSED=$((PASSED + 1)); }
die() { fail "$*"; exit 1; }

# finish NAME [CMD]: the test's last line: "NAME: all checks passed" and
# exit 0, or run CMD (e.g. show a log) and exit 1 if any check failed. A
# test that reached its end without a single check (no pass, no fail) has
# shown nothing: it fails.
finish() {
  if [ "$FAILED" = 0 ] && [ "$PASSED" = 0 ]; then
    echo "FAIL: $1 ran no check"
    exit 1
  fi
  if [ "$FAILED" = 0 ]; then
    echo "$1: all checks passed"
    exit 0
  fi
  [ -n "${2:-}" ] && eval "$2"
  exit 1
}

need_root() { [ "$(id -u)" = 0 ] || skip "needs root (loop devices, cgroups)"; }
need_loop() {
  command -v losetup >/dev/null || skip "losetup not installed"
  [ -e /dev/loop-control ] || modprobe loop 2>/dev/null
  [ -e /dev/loop-control ] || skip "no loop device support (/dev/loop-control missing)"
}
# need_throttle: skips unless block I/O can be throttled per cgroup (cg_detect).
need_throttle() { cg_detect || skip "no block I/O throttling: $CG_WHY"; }
need_blkio() { need_throttle; } # the old name: v1 or v2, whichever exists
# need WHAT...: need_WHAT for each, e.g. `need root loop collectd`.
need() { local w; for w; do "need_$w"; done; }
# need_cmd CMD [DEBIAN_PACKAGE]: skips unless CMD is installed.
need_cmd() { command -v "$1" >/dev/null || skip "$1 not installed${2:+ (Debian: $2)}"; }

# ---- numbers ---------------------------------------------------------------
# Numbers are compared with awk. A value that is not a finite decimal
# number ("", U, nan, inf) makes every comparison false. On false, the
# comparison prints what it expected and what it saw (one indented line), so
# the FAIL line that follows need not repeat it.
is_num() { [[ $1 =~ ^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$ ]]; }

# _num_test EXPECTED SEEN COND X...: awk's COND over n[1], n[2]... (the
# numbers X...); if false, or an X is not a number, prints "expected
# EXPECTED, seen SEEN" (SEEN is an awk expression too) and returns 1.
_num_test() {
  local expected=$1 seen=$2 cond=$3 x
  shift 3
  for x in "$@"; do
    is_num "$x" || { echo "  expected $expected, seen '$x' (not a number)"; return 1; }
  done
  awk -v e="$expected" '
    function cmp(x, op, y) {
      return op == "<" ? x < y : op == "<=" ? x <= y : op == ">" ? x > y : op == ">=" ? x >= y : op == "==" ? x == y : x != y
    }
    function abs(x) { return x < 0 ? -x : x }
    BEGIN {
      for (i = 1; i < ARGC; i++) n[i] = ARGV[i] + 0
      if ('"$cond"') exit 0
      print "  expected " e ", seen " ('"$seen"')
      exit 1
    }' "$@"
}
_num_op() { case $1 in '<' | '<=' | '>' | '>=' | '==' | '!=') ;; *) echo "  unknown comparison '$1'" && return 1 ;; esac }

# num_cmp A OP B: true if A OP B; OP is one of < <= > >= == !=.
num_cmp() { _num_op "$2" && _num_test "$2 $3" 'n[1]' "cmp(n[1], \"$2\", n[2])" "$1" "$3"; }
# num_between X LO HI: true if LO <= X <= HI.
num_between() { _num_test "$2 to $3" 'n[1]' 'n[1] >= n[2] && n[1] <= n[3]' "$1" "$2" "$3"; }
# within VALUE TARGET PCT: true if |VALUE-TARGET| <= PCT% of TARGET.
within() {
  _num_test "$2 +-$3%" 'n[1] " (" (n[2] ? sprintf("%.1f", 100 * abs(n[1] - n[2]) / n[2]) : "inf") "% off)"' \
    'abs(n[1] - n[2]) <= n[2] * n[3] / 100' "$1" "$2" "$3"
}
# ratio_cmp A B OP R: true if A OP R*B, i.e. A/B OP R without dividing.
ratio_cmp() {
  _num_op "$3" && _num_test "$1/$2 $3 $4" '(n[2] ? n[1] / n[2] : "inf")' "cmp(n[1], \"$3\", n[3] * n[2])" "$1" "$2" "$4"
}

# num_calc EXPR [FORMAT]: prints the awk expression EXPR (printf FORMAT, %.6g).
num_calc() { awk "BEGIN { printf \"${2:-%.6g}\\n\", ($1) }"; }

# num_max A B: the larger of two values; one that is not a number counts as 0.
num_max() {
  local a=$1 b=$2
  is_num "$a" || a=0
  is_num "$b" || b=0
  awk -v a="$a" -v b="$b" 'BEGIN { print (a + 0 >= b + 0) ? a : b }'
}

# json_get FILE EXPR: evaluates a python expression over the JSON object d.
json_get() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# ---- waiting ---------------------------------------------------------------
# wait_until SECONDS CMD...: runs CMD every half second until it succeeds
# (0) or SECONDS have passed (1).
wait_until() {
  local secs=$1 end
  shift
  end=$((SECONDS + secs))
  while :; do
    "$@" && return 0
    [ "$SECONDS" -ge "$end" ] && return 1
    sleep 0.5
  done
}

# wait_log FILE SECONDS ERE: waits until a line of FILE matches ERE. On
# timeout prints what it waited for and the last lines of FILE; returns 1.
wait_log() {
  local f=$1 secs=$2 re=$3
  wait_until "$secs" grep -qE -- "$re" "$f" 2>/dev/null && return 0
  echo "  timed out after $secs s waiting for /$re/ in $f; last lines:"
  tail -3 "$f" 2>/dev/null | sed 's/^/    /'
  return 1
}

# log_first [-F] FILE PATTERN: the first line of FILE matching PATTERN (ERE,
# or a fixed string with -F), without collectd's "[timestamp] " prefix.
log_first() {
  local opt=-E
  [ "$1" = -F ] && { opt=-F; shift; }
  grep -m1 "$opt" -- "$2" "$1" | sed 's/^\[[^]]*\] //'
}
# notif_msg FILE ERE: the message of the first notification line matching ERE.
notif_msg() { grep -m1 -E -- "$2" "$1" | sed 's/.*message = //'; }

# ---- loop devices, filesystems, cgroups ------------------------------------
# make_tmpdir: a fresh directory on a filesystem with O_DIRECT (/var/tmp).
make_tmpdir() {
  local d
  d=$(mktemp -d /var/tmp/diskprobe-test.XXXXXX) || exit 1
  echo "dir $d" >>"$_REG"
  [ -n "${KEEP_TMP:-}" ] && echo "keeping $d" >&2
  echo "$d"
}

# make_loop SIZE_MB [DIR] [random]: a loop device over a new backing file
# (in DIR, or a new temp dir); prints it. "random": the backing file is
# filled with random data first (reads of holes would not reach the disk).
# LOOP_FLAGS (e.g. -P for a partition scan) are passed to losetup.
make_loop() {
  local size=$1 dir=${2:-} fill=${3:-} f dev
  [ -n "$dir" ] || dir=$(make_tmpdir)
  f="$dir/backing.$RANDOM.img"
  if [ "$fill" = random ]; then
    dd if=/dev/urandom of="$f" bs=1M count="$size" status=none && sync "$f" || die "cannot write $f"
  else
    truncate -s "${size}M" "$f" || die "cannot create $f"
  fi
  # shellcheck disable=SC2086 # LOOP_FLAGS is a list of options
  dev=$(losetup -f --show --direct-io=on ${LOOP_FLAGS:-} "$f" 2>/dev/null || losetup -f --show ${LOOP_FLAGS:-} "$f") ||
    skip "cannot attach a loop device"
  echo "loop $dev" >>"$_REG"
  echo "$dev"
}

# make_fs DEV MOUNTPOINT: ext4 on DEV, mounted at MOUNTPOINT (created);
# fails the test if either step fails.
make_fs() {
  mkfs.ext4 -q -F "$1" >/dev/null 2>&1 || die "mkfs.ext4 $1 failed"
  mkdir -p "$2" && mount "$1" "$2" || die "mount $1 $2 failed"
  register_mount "$2"
}

# diskstat NAME COLUMN: column COLUMN (awk numbering: 3 is the name, 4 the
# first counter) of NAME's /proc/diskstats line, -1 if the kernel has none.
diskstat() { awk -v n="$1" -v c="$2" '$3 == n { print (NF >= c ? $c : -1) }' /proc/diskstats; }

# cg_detect: which hierarchy throttles block I/O here. Sets CG_MODE (v1:
# blkio.throttle.*_device files; v2: io.max) and CG_PARENT (where test
# cgroups are made); returns 1 with CG_WHY saying why when neither exists.
# (A controller is bound to one hierarchy: io is in v1 blkio or in v2.)
cg_detect() {
  local r
  CG_WHY=
  if [ -f "$BLKIO/blkio.throttle.read_iops_device" ]; then
    CG_MODE=v1 CG_PARENT=$BLKIO
    return 0
  fi
  for r in "$CGROUP_ROOT" "$CGROUP_ROOT/unified"; do
    [ -f "$r/cgroup.controllers" ] || continue
    if grep -qw io "$r/cgroup.controllers"; then
      CG_MODE=v2 CG_PARENT=$r
      return 0
    fi
    CG_WHY="${CG_WHY:+$CG_WHY; }cgroup v2 at $r has no io controller (cgroup.controllers: '$(cat "$r/cgroup.controllers")')"
  done
  CG_WHY="cgroup v1 blkio has no $BLKIO/blkio.throttle.read_iops_device; ${CG_WHY:-no cgroup v2 hierarchy at $CGROUP_ROOT or $CGROUP_ROOT/unified}"
  CG_MODE=
  return 1
}

# make_cgroup: a new cgroup that can throttle block I/O (v1 blkio, or v2
# with io enabled in the parent's cgroup.subtree_control); prints its
# directory.
make_cgroup() {
  cg_detect || skip "no block I/O throttling: $CG_WHY"
  local cg="$CG_PARENT/diskprobe-test-$$-$RANDOM"
  if [ "$CG_MODE" = v2 ] && ! grep -qw io "$CG_PARENT/cgroup.subtree_control" 2>/dev/null; then
    echo +io >"$CG_PARENT/cgroup.subtree_control" 2>/dev/null ||
      skip "cannot enable the io controller in $CG_PARENT/cgroup.subtree_control (processes in a non-root cgroup?)"
    echo "cgroup-io $CG_PARENT" >>"$_REG"
  fi
  mkdir "$cg" || skip "cannot create a $CG_MODE cgroup in $CG_PARENT"
  echo "cgroup $cg" >>"$_REG"
  echo "$cg"
}

devnum() { printf '%d:%d' "0x$(stat -c %t "$1")" "0x$(stat -c %T "$1")"; }

# _cg_v2 CGROUP: true if CGROUP throttles through io.max (v2): it has
# io.max, or no v1 blkio file and a v2 parent (every v2 cgroup has
# cgroup.controllers; a v1 one has not). Decided from the directory, since
# make_cgroup runs in a subshell whose variables the test never sees.
_cg_v2() {
  [ -f "$1/io.max" ] || { [ ! -e "$1/blkio.throttle.read_iops_device" ] && [ -f "${1%/*}/cgroup.controllers" ]; }
}
# _cg_iomax KIND: the io.max key of a v1 KIND (read_iops -> riops ...).
_cg_iomax() {
  case $1 in
  read_iops) echo riops ;; write_iops) echo wiops ;; read_bps) echo rbps ;; write_bps) echo wbps ;;
  *) echo "  unknown throttle kind '$1'" >&2 && return 1 ;;
  esac
}

# throttle CGROUP DEV KIND VALUE: KIND is read_iops, write_iops, read_bps
# or write_bps (v1: blkio.throttle.KIND_device; v2: io.max riops/wiops/
# rbps/wbps). unthrottle CGROUP DEV KIND lifts it (v1: 0; v2: max).
throttle() {
  if _cg_v2 "$1"; then
    local k
    k=$(_cg_iomax "$3") && echo "$(devnum "$2") $k=$4" >"$1/io.max"
  else
    echo "$(devnum "$2") $4" >"$1/blkio.throttle.$3_device"
  fi
}
unthrottle() {
  if _cg_v2 "$1"; then
    local k
    k=$(_cg_iomax "$3") && echo "$(devnum "$2") $k=max" >"$1/io.max"
  else
    echo "$(devnum "$2") 0" >"$1/blkio.throttle.$3_device"
  fi
}

# in_cgroup CGROUP CMD...: runs CMD inside CGROUP.
in_cgroup() {
  local cg=$1
  shift
  bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}

# spawn_in_cgroup CGROUP CMD...: starts CMD in the background inside
# CGROUP; its pid (CMD itself, not a wrapper shell) is in $SPAWNED.
spawn_in_cgroup() {
  local cg=$1
  shift
  (echo "$BASHPID" >"$cg/cgroup.procs" && exec "$@") &
  SPAWNED=$!
  register_pid "$SPAWNED"
}

# ---- collectd ----------------------------------------------------------------
need_collectd() {
  command -v collectd >/dev/null || skip "collectd (collectd-core) not installed"
  [ -f "$PLUGIN_SO" ] || skip "plugin not built"
}

# collectd_dir DIR: a private PluginDir, DIR/plugins, holding copies of the
# plugins we use (collectd's PluginDir refuses symlinks) and of the built
# diskprobe.so; and DIR/rrd.
collectd_dir() {
  local d=$1 p
  mkdir -p "$d/plugins" "$d/rrd"
  for p in logfile rrdtool write_prometheus threshold unixsock network csv; do
    [ -f "/usr/lib/collectd/$p.so" ] && cp "/usr/lib/collectd/$p.so" "$d/plugins/"
  done
  cp "$PLUGIN_SO" "$d/plugins/"
}

# collectd_logfile FILE: a logfile plugin block (level info, timestamps).
collectd_logfile() {
  printf 'LoadPlugin logfile\n<Plugin logfile>\n  LogLevel info\n  File "%s"\n  Timestamp true\n</Plugin>\n' "$1"
}

# collectd_conf_head DIR INTERVAL: global options (Hostname diskprobe-test,
# BaseDir, PIDFile, PluginDir DIR/plugins, both TypesDB files, Interval),
# the logfile DIR/collectd.log and rrdtool into DIR/rrd.
collectd_conf_head() {
  local d=$1 ivl=$2
  cat <<CONF
Hostname "$COLLECTD_HOST"
FQDNLookup false
BaseDir "$d"
PIDFile "$d/collectd.pid"
PluginDir "$d/plugins"
TypesDB "/usr/share/collectd/types.db"
TypesDB "$top_srcdir/plugin/diskprobe.types.db"
Interval $ivl
CONF
  collectd_logfile "$d/collectd.log"
  printf 'LoadPlugin rrdtool\n<Plugin rrdtool>\n  DataDir "%s/rrd"\n</Plugin>\n' "$d"
}

# collectd_conf DIR INTERVAL <<BLOCK: writes DIR/collectd.conf: the head
# above, then "LoadPlugin diskprobe" and <Plugin diskprobe> holding the
# text read from stdin. Sets up DIR/plugins on first use.
collectd_conf() {
  local d=$1 ivl=$2
  [ -f "$d/plugins/diskprobe.so" ] || collectd_dir "$d"
  {
    collectd_conf_head "$d" "$ivl"
    echo 'LoadPlugin diskprobe'
    echo '<Plugin diskprobe>'
    cat
    echo '</Plugin>'
  } >"$d/collectd.conf"
}

# collectd_check DIR [CONF]: `collectd -T` (parse, init, one read, exit) on
# CONF (DIR/collectd.conf); its output is in DIR/check.out. Returns its status.
collectd_check() {
  collectd -T -C "${2:-$1/collectd.conf}" >"$1/check.out" 2>&1
}

# collectd_start DIR [CGROUP]: starts collectd in the foreground (-f) in
# the background, on DIR/collectd.conf, output to DIR/collectd.out, inside
# CGROUP if given; its pid is in $COLLECTD_PID and registered for cleanup.
# COLLECTD_WRAP (words, split on spaces): a command collectd is started
# under, which must exec its arguments in the same process (e.g. `unshare
# --uts SCRIPT`, SCRIPT ending in `exec "$@"`), so the pid stays collectd's.
collectd_start() {
  local d=$1 cg=${2:-}
  # shellcheck disable=SC2086 # COLLECTD_WRAP is a list of words
  if [ -n "$cg" ]; then
    spawn_in_cgroup "$cg" ${COLLECTD_WRAP:-} collectd -f -C "$d/collectd.conf" >>"$d/collectd.out" 2>&1
    COLLECTD_PID=$SPAWNED
  else
    ${COLLECTD_WRAP:-} collectd -f -C "$d/collectd.conf" >>"$d/collectd.out" 2>&1 &
    COLLECTD_PID=$!
    register_pid "$COLLECTD_PID"
  fi
}

# is_running PID: true while PID has not exited (a zombie has).
is_running() {
  local st
  st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
  [ "${st%% *}" != Z ]
}

# collectd_wait PID [DEADLINE]: waits for PID (a child of this shell) to
# exit, at most DEADLINE seconds (default 120); then SIGKILLs it. Prints how
# long it took; returns its exit status, or 124 if the deadline passed.
# STOP_SECS holds the seconds waited.
collectd_wait() {
  local pid=$1 deadline=${2:-120} t0 rc
  t0=$(date +%s%N)
  while is_running "$pid" && [ $(($(date +%s%N) - t0)) -lt $((deadline * 1000000000)) ]; do sleep 0.1; done
  if is_running "$pid"; then
    echo "  collectd (pid $pid) still running after $deadline s: killing it"
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rc=124
  else
    wait "$pid"
    rc=$?
  fi
  _unregister_pid "$pid"
  STOP_SECS=$(num_calc "($(date +%s%N) - $t0) / 1e9" %.1f)
  echo "collectd (pid $pid) exited with status $rc, $STOP_SECS s after the wait began"
  return $rc
}

# collectd_stop [PID [DEADLINE]]: SIGTERM to PID ($COLLECTD_PID), then
# collectd_wait.
collectd_stop() {
  local pid=${1:-$COLLECTD_PID}
  kill -TERM "$pid" 2>/dev/null
  collectd_wait "$pid" "${2:-120}"
}

# collectd_run DIR SECONDS: runs collectd on DIR/collectd.conf for SECONDS,
# then stops it; returns collectd's exit status.
collectd_run() {
  collectd_start "$1"
  sleep "$2"
  collectd_stop "$COLLECTD_PID"
}

# ---- Prometheus --------------------------------------------------------------
# write_prometheus_conf PORT: a write_prometheus block serving on PORT.
write_prometheus_conf() {
  printf 'LoadPlugin write_prometheus\n<Plugin write_prometheus>\n  Port "%s"\n</Plugin>\n' "$1"
}

# prometheus_start DIR PORT [SCRAPE_PORT]: a real Prometheus on 127.0.0.1:PORT
# with its data and log (prometheus.log) in DIR, registered for cleanup. With
# SCRAPE_PORT it first writes DIR/prometheus.yml: scrape and evaluation every
# second, the shipped dashboards/alerts.yml, fleet_disk_rules.yml and
# fleet_rules.yml (one Prometheus sees every disk), and the
# shipped scrape job (contrib/examples/prometheus-scrape.yml: honor_labels,
# the join labels' metric_relabel_configs) named collectd, on
# 127.0.0.1:SCRAPE_PORT (collectd's write_prometheus); without,
# DIR/prometheus.yml must exist. FLEET_DISK_RULES, FLEET_RULES: other files
# in place of the shipped ones (a test's copies with shorter windows). ALERTMANAGER
# (host:port, with SCRAPE_PORT): the alerts go to that Alertmanager.
prometheus_start() {
  local p=$1 port=$2 rules=${FLEET_RULES:-$top_srcdir/dashboards/fleet_rules.yml}
  local disk_rules=${FLEET_DISK_RULES:-$top_srcdir/dashboards/fleet_disk_rules.yml}
  mkdir -p "$p"
  if [ -n "${3:-}" ]; then
    python3 - "$top_srcdir" "$3" "$disk_rules" "$rules" "${4:-}" >"$p/prometheus.yml" <<'PY' || die "cannot write $p/prometheus.yml from the shipped scrape config"
import json, sys, yaml
top, port, fleet_disk_rules, fleet_rules, am = sys.argv[1:6]
job = yaml.safe_load(open(f"{top}/contrib/examples/prometheus-scrape.yml"))["scrape_configs"][0]
job.update(job_name="collectd", scrape_interval="1s",
           static_configs=[{"targets": [f"127.0.0.1:{port}"]}])
conf = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [f"{top}/dashboards/alerts.yml", fleet_disk_rules, fleet_rules],
        "scrape_configs": [job]}
if am:
    conf["alerting"] = {"alertmanagers": [{"static_configs": [{"targets": [am]}]}]}
print(json.dumps(conf, indent=2))
PY
  fi
  prometheus --config.file="$p/prometheus.yml" --storage.tsdb.path="$p/data" \
    --web.listen-address="127.0.0.1:$port" >"$p/prometheus.log" 2>&1 &
  register_pid $!
}

# ---- a fleet on loopback (contrib/examples' fleet drop-ins) --------------------
FLEET_EX="$top_srcdir/contrib/examples"
# fleet_secret: the password fleet-auth gives the user diskprobe-fleet.
fleet_secret() { sed -n 's/^diskprobe-fleet: *//p' "$FLEET_EX/fleet-auth"; }

# fleet_main_conf DIR: DIR/collectd.conf as Debian's collectd.conf would be:
# no Hostname, FQDNLookup true; then LoadPlugin diskprobe (as the package's
# diskprobe.conf), the text read from stdin and the drop-in DIR/dropin.conf,
# included.
fleet_main_conf() {
  local w=$1
  [ -f "$w/plugins/diskprobe.so" ] || collectd_dir "$w"
  {
    collectd_conf_head "$w" 1 | sed -e '/^Hostname /d' -e 's/^FQDNLookup false/FQDNLookup true/'
    echo 'LoadPlugin diskprobe'
    cat
    echo "Include \"$w/dropin.conf\""
  } >"$w/collectd.conf"
}

# fleet_server_dropin DIR PORT PROM_PORT: DIR/dropin.conf, the central's
# drop-in (fleet-server.conf) as it ships but for the listen address
# (127.0.0.1:PORT), AuthFile (DIR/fleet-auth, a copy of the example),
# DataDir (DIR/rrd), and its four commented write_prometheus lines loaded
# (what the file offers a small fleet) on PROM_PORT; dies if another line
# changed.
fleet_server_dropin() {
  local w=$1 changed
  mkdir -p "$w"
  cp "$FLEET_EX/fleet-auth" "$w/fleet-auth"
  sed -e "s|<Listen \"0.0.0.0\" \"25826\">|<Listen \"127.0.0.1\" \"$2\">|" \
    -e "s|AuthFile \"/etc/collectd/fleet-auth\"|AuthFile \"$w/fleet-auth\"|" \
    -e "s|DataDir \"/var/lib/collectd/rrd\"|DataDir \"$w/rrd\"|" \
    -e '/^#LoadPlugin write_prometheus$/,/^#<\/Plugin>$/s/^#//' \
    -e "s|^  Port \"9103\"|  Port \"$3\"|" "$FLEET_EX/fleet-server.conf" >"$w/dropin.conf"
  changed=$(diff "$FLEET_EX/fleet-server.conf" "$w/dropin.conf" | grep -c '^>')
  [ "$changed" = 7 ] || die "server drop-in: $changed lines rewritten, expected 7 (address, AuthFile, DataDir, the 4 write_prometheus lines)"
}

# fleet_client_dropin DIR PORT PASSWORD SECURITYLEVEL LINES_CHANGED:
# DIR/dropin.conf, a member's drop-in (fleet-client.conf) as it ships but
# for the server (127.0.0.1:PORT), the password and the SecurityLevel; dies
# unless LINES_CHANGED lines differ or if it names a Hostname.
fleet_client_dropin() {
  local w=$1 changed
  mkdir -p "$w"
  sed -e "s|<Server \"collector.example.net\" \"25826\">|<Server \"127.0.0.1\" \"$2\">|" \
    -e "s|Password \"$(fleet_secret)\"|Password \"$3\"|" \
    -e "s|SecurityLevel Encrypt|SecurityLevel $4|" "$FLEET_EX/fleet-client.conf" >"$w/dropin.conf"
  changed=$(diff "$FLEET_EX/fleet-client.conf" "$w/dropin.conf" | grep -c '^>')
  [ "$changed" = "$5" ] || die "${w##*/}: $changed lines of the client drop-in rewritten, expected $5"
  grep -qi '^ *Hostname' "$w/dropin.conf" && die "the client drop-in names a Hostname"
  return 0
}

# fleet_as_host DIR NAME: DIR/as-host, a wrapper that runs its arguments
# under the host name NAME and an /etc/hosts of its own (DIR/hosts, giving
# NAME.fleet.test); use it inside `unshare --uts --mount` (COLLECTD_WRAP),
# the namespaces die with the command.
fleet_as_host() {
  printf '127.0.0.1 localhost\n127.0.1.1 %s.fleet.test %s\n' "$2" "$2" >"$1/hosts"
  printf '#!/bin/sh\nmount --bind "%s" /etc/hosts && hostname "%s" && exec "$@"\n' "$1/hosts" "$2" >"$1/as-host"
  chmod +x "$1/as-host"
}

# dashboard_queries API_URL OUT [FILE[:ROW_TITLE_PREFIX]...]: every panel
# query of the dashboards (or of those rows) against the Prometheus at
# API_URL (dashboard_queries.py; its output in OUT), each of its PASS and
# FAIL lines a pass or fail here, the rest printed.
dashboard_queries() {
  local api=$1 out=$2 rc line
  shift 2
  python3 "$top_srcdir/tests/shell/dashboard_queries.py" "$top_srcdir/dashboards" "$api" "$@" >"$out" 2>&1
  rc=$?
  while IFS= read -r line; do
    case $line in
    PASS:*) pass "${line#PASS: }" ;;
    FAIL:*) fail "${line#FAIL: }" ;;
    *) echo "$line" ;;
    esac
  done <"$out"
  [ $rc = 0 ] || fail "the dashboard query check failed (python exit $rc)"
}

# faultyfs_mount DIR: tests/shell/faultyfs.py serving DIR/back at DIR/mnt,
# controlled by DIR/ctl ("ok" if new), its log appended to DIR/fuse.log;
# the daemon's pid in FUSE_PID, it and the mount registered for cleanup.
# Skips the test if the mount does not appear within 5 s.
faultyfs_mount() {
  mkdir -p "$1/back" "$1/mnt"
  [ -f "$1/ctl" ] || echo ok >"$1/ctl"
  /usr/bin/python3 "$top_srcdir/tests/shell/faultyfs.py" "$1/back" "$1/mnt" "$1/ctl" >>"$1/fuse.log" 2>&1 &
  FUSE_PID=$!
  register_pid "$FUSE_PID"
  wait_until 5 mountpoint -q "$1/mnt" || skip "cannot mount the FUSE test filesystem: $(cat "$1/fuse.log")"
  register_mount "$1/mnt"
}

# free_port: a TCP port free on 127.0.0.1 now.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# alertmanager_start CONFIG DIR: Debian's prometheus-alertmanager with CONFIG
# on a free loopback port, its data in DIR and its log in DIR.log,
# registered for cleanup; sets AM_URL and AM_ADDR (host:port) once it is
# ready, dies if it is not within 30 s.
alertmanager_start() {
  AM_ADDR=127.0.0.1:$(free_port)
  AM_URL="http://$AM_ADDR"
  prometheus-alertmanager --config.file="$1" --storage.path="$2" --web.listen-address="$AM_ADDR" \
    --cluster.listen-address= --log.level=warn >"$2.log" 2>&1 &
  register_pid $!
  wait_until 30 curl -fs "$AM_URL/-/ready" -o /dev/null || { cat "$2.log"; die "Alertmanager not ready on $AM_URL"; }
}

# webhook_start PREFIX: an Alertmanager webhook receiver on a free loopback
# port (python3 http.server), registered for cleanup; sets HOOK_URL (callers
# append a path naming the receiver). Per alert in each POST it appends
# "UNIXTIME RECEIVER STATUS ALERTNAME DISKPROBE" to PREFIX.log, and each POST
# as one JSON line {"t": UNIXTIME, "payload": ...} to PREFIX.json.
webhook_start() {
  rm -f "$1.port"
  touch "$1.log" "$1.json"
  python3 - "$1" <<'PY' &
import http.server, json, sys, time
prefix = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        now = time.time()
        with open(prefix + ".json", "a") as f:
            f.write(json.dumps({"t": now, "payload": body}) + "\n")
        with open(prefix + ".log", "a") as f:
            for a in body["alerts"]:
                f.write("%.0f %s %s %s %s\n" % (now, body["receiver"], a["status"], a["labels"]["alertname"],
                                                a["labels"].get("diskprobe", "-")))
        self.send_response(200)
        self.end_headers()
    def log_message(self, *args):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(prefix + ".port", "w").write(str(s.server_port))
s.serve_forever()
PY
  register_pid $!
  wait_until 10 test -s "$1.port" || die "the webhook receiver did not start"
  HOOK_URL="http://127.0.0.1:$(cat "$1.port")"
}

# ---- RRD files ---------------------------------------------------------------
# rrd_last FILE [DS]: the last value of data source DS ("value" if omitted),
# as rrdtool lastupdate has it (a number or U); fails if FILE or DS is missing.
rrd_last() {
  rrdtool lastupdate "$1" 2>/dev/null | awk -v ds="${2:-value}" '
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == ds) c = i; next }
    NF { last = $0 }
    END { if (!c || last == "") exit 1; sub(/^[^:]*: */, "", last); split(last, v, " "); print v[c] }'
}

# rrd_fetch FILE SECONDS: rrdtool fetch AVERAGE over the last SECONDS, only
# the rows without a NaN.
rrd_fetch() {
  rrdtool fetch "$1" AVERAGE -s "-${2}s" 2>/dev/null | grep -E '^[0-9]+: ' | grep -v nan
}
# rrd_points FILE SECONDS: how many such rows (0 if FILE is missing).
rrd_points() { rrd_fetch "$1" "$2" | wc -l; }
# rrd_newest FILE SECONDS: the first value of the newest such row.
rrd_newest() { rrd_fetch "$1" "$2" | tail -1 | awk '{ print $2 }'; }
