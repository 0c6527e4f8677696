#!/bin/bash
# notify_examples.sh - the notification examples for RRD-only hosts:
#   - contrib/examples/health-notify-exec.conf and health-notify-email.conf,
#     each Included from a minimal full config, pass `collectd -t` (parse,
#     load the plugin, its config callback accepts every option), and a
#     misspelt option does fail it (the check can fail);
#   - contrib/examples/diskprobe_notify.sh turns a notification in collectd's
#     exec format into exactly one logger call (a stand-in logger on PATH
#     records it): priority by severity, diskprobe's only unless --all,
#     hostile input (command substitutions, control characters, a leading
#     dash, 1 MiB) logged as inert text and nothing of it executed;
#   - with no syslog socket (a host with no syslog daemon, where logger
#     drops lines without an error) the line goes to --file, never
#     through a symlink, and without --file the script says the line is
#     lost and exits 1;
#   - logfile.conf (the route that needs no script) passes collectd's
#     checks;
#   - as root: a real collectd runs the script through NotificationExec as
#     nobody on a threshold notification, and the line arrives (in syslog's
#     stand-in and in the --file copy).
# notify_email needs libesmtp6 (collectd-core only suggests it): installed
# when missing and root, else that check is skipped.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd collectd collectd-core
ex="$top_srcdir/contrib/examples"
script="$ex/diskprobe_notify.sh"
d=$(make_tmpdir)
chmod 0755 "$d"

head_conf() { # head_conf NAME: a minimal full config around an Include
  cat <<CONF
Hostname "db1"
FQDNLookup false
BaseDir "$d/$1"
PIDFile "$d/$1/collectd.pid"
PluginDir "/usr/lib/collectd"
TypesDB "/usr/share/collectd/types.db"
TypesDB "$top_srcdir/plugin/diskprobe.types.db"
Interval 1
LoadPlugin logfile
<Plugin logfile>
  LogLevel info
  File "$d/$1/collectd.log"
</Plugin>
CONF
}

# config_ok CONF LOG: collectd -t (parse, load plugins) exits 0, and -T (the
# plugins' config callbacks, init, one read) logs no complaint: collectd
# exits 0 on an option a plugin rejects, it only logs it.
config_ok() {
  collectd -t -C "$1" >"$1.t.out" 2>&1 || return 1
  : >"$2"
  collectd -T -C "$1" >"$1.T.out" 2>&1 || return 1
  ! grep -Eiq 'unknown config option|failed|error|could not|cannot|refus' "$1.T.out" "$2"
}
complaints() { cat "$1.t.out" "$1.T.out" "$2" 2>/dev/null | grep -Ei 'unknown|failed|error|could not|cannot|refus' | head -3 | tr '\n' ' '; }

parse_check() { # parse_check EXAMPLE
  local n=${1%.conf}
  mkdir -p "$d/$n"
  # the example as shipped, but a File it names goes to this test's directory
  sed "s|^\(  File \"\)[^\"]*|\1$d/$n/file.log|" "$ex/$1" >"$d/$n/example.conf"
  { head_conf "$n"; echo "Include \"$d/$n/example.conf\""; } >"$d/$n/collectd.conf"
  if config_ok "$d/$n/collectd.conf" "$d/$n/collectd.log"; then
    pass "$1: collectd -t and -T accept it inside a full config, no complaint logged"
  else
    fail "$1: refused: $(complaints "$d/$n/collectd.conf" "$d/$n/collectd.log")"
  fi
  # The same with its first option misspelt must be caught: the check can fail.
  sed '/^<Plugin /,/^<\/Plugin>/{/^  [A-Z]/{s/^  \([A-Za-z]*\)/  \1Typo/;:a;n;ba}}' "$d/$n/example.conf" >"$d/$n/bad.conf"
  { head_conf "$n"; echo "Include \"$d/$n/bad.conf\""; } >"$d/$n/bad-full.conf"
  if grep -q 'Typo ' "$d/$n/bad.conf" && ! config_ok "$d/$n/bad-full.conf" "$d/$n/collectd.log"; then
    pass "$1: a misspelt option is caught ($(complaints "$d/$n/bad-full.conf" "$d/$n/collectd.log"))"
  else
    fail "$1: a misspelt option went unnoticed ($(grep Typo "$d/$n/bad.conf"))"
  fi
}

parse_check health-notify-exec.conf
parse_check logfile.conf

esmtp_ok() { ! ldd /usr/lib/collectd/notify_email.so 2>/dev/null | grep -q 'not found'; }
if [ -f /usr/lib/collectd/notify_email.so ] && ! esmtp_ok && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "notify_email needs libesmtp6: installing it"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libesmtp6 >"$d/apt.log" 2>&1 ||
    { apt-get update >>"$d/apt.log" 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libesmtp6 >>"$d/apt.log" 2>&1; } ||
    tail -n 3 "$d/apt.log"
fi
if [ -f /usr/lib/collectd/notify_email.so ] && esmtp_ok; then
  parse_check health-notify-email.conf
else
  echo "SKIP: health-notify-email.conf (notify_email.so or libesmtp6 missing)"
fi

# ---- the script, with a stand-in logger -----------------------------------
mkdir -p "$d/bin"
cat >"$d/bin/logger" <<'LOGGER'
#!/bin/sh
# records one call: its arguments, one per line, then a separator
out=${LOGGER_OUT:?}
for a; do printf '%s\n' "$a"; done >>"$out"
echo "--end--" >>"$out"
LOGGER
chmod 0755 "$d/bin/logger"
export LOGGER_OUT="$d/logger.out" DISKPROBE_NOTIFY_PATH="$d/bin:/usr/bin:/bin"
# a syslog socket for the stand-in (the script sends only where one is)
python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).bind(sys.argv[1])' "$d/log.sock" ||
  die "cannot make a unix socket"
chmod 0666 "$d/log.sock"
export DISKPROBE_NOTIFY_SOCKET="$d/log.sock"

run() { # run [ARGS...] < input: the script's logger calls in $d/logger.out
  : >"$LOGGER_OUT"
  (cd "$d" && sh "$script" "$@")
}
calls() { grep -c -- '--end--' "$LOGGER_OUT"; }
msg() { sed -n 6p "$LOGGER_OUT"; } # -t diskprobe -p PRIO -- MESSAGE

printf 'Severity: FAILURE\nTime: 1700000000.123\nHost: db1\nPlugin: diskprobe\nPluginInstance: data\nType: health\nTypeInstance: baseline\n\ndiskprobe: FAILURE by fail: probe randread-qd1 at 9.1x its baseline; target data (ssd) on device sdb, host db1\n' | run
want='diskprobe[FAILURE] host=db1 target=data type=health rule=baseline: diskprobe: FAILURE by fail: probe randread-qd1 at 9.1x its baseline; target data (ssd) on device sdb, host db1'
if [ "$(calls)" = 1 ] && [ "$(sed -n 1,5p "$LOGGER_OUT" | tr '\n' ' ')" = "-t diskprobe -p daemon.crit -- " ] &&
  [ "$(msg)" = "$want" ]; then
  pass "script: FAILURE health notification -> one daemon.crit line: $(msg)"
else
  fail "script: FAILURE health notification logged as: $(tr '\n' '|' <"$LOGGER_OUT")"
fi

printf 'Severity: OKAY\nHost: db1\nPlugin: diskprobe\nPluginInstance: data\nType: health\nTypeInstance: baseline\n\ntarget data: OK again\n' | run
[ "$(calls)" = 1 ] && sed -n 4p "$LOGGER_OUT" | grep -qx daemon.notice &&
  pass "script: OKAY -> daemon.notice" || fail "script: OKAY logged as: $(tr '\n' '|' <"$LOGGER_OUT")"

printf 'Severity: WARNING\nHost: db1\nPlugin: diskprobe\nPluginInstance: data\nType: stalled\nTypeInstance: \n\nstalled\n' | run
[ "$(calls)" = 1 ] && sed -n 4p "$LOGGER_OUT" | grep -qx daemon.warning &&
  [ "$(msg)" = "diskprobe[WARNING] host=db1 target=data type=stalled instance=-: stalled" ] &&
  pass "script: WARNING stalled -> daemon.warning, empty type instance shown as -" ||
  fail "script: WARNING stalled logged as: $(tr '\n' '|' <"$LOGGER_OUT")"

other='Severity: WARNING\nHost: db1\nPlugin: load\nType: load\n\nload is high\n'
printf "$other" | run
[ "$(calls)" = 0 ] && pass "script: another plugin's notification is ignored" ||
  fail "script: logged another plugin's notification: $(tr '\n' '|' <"$LOGGER_OUT")"
printf "$other" | run --all
[ "$(calls)" = 1 ] && [ "$(msg)" = "diskprobe[WARNING] host=db1 plugin=load/- type=load instance=-: load is high" ] &&
  pass "script: --all logs it: $(msg)" || fail "script: --all: $(tr '\n' '|' <"$LOGGER_OUT")"

# Hostile input: nothing may run, nothing may escape, one line is logged.
esc=$(printf '\033')
{
  printf 'Severity: FAILURE\n'
  printf 'Host: $(touch %s/pwned-host)`touch %s/pwned-tick`\n' "$d" "$d"
  printf 'Plugin: diskprobe\nPluginInstance: data;touch %s/pwned-semi\nType: health\n' "$d"
  printf 'TypeInstance: %s[31mred%s[0m\n' "$esc" "$esc"
  printf '\n-n $(touch %s/pwned-msg) ${HOME?} %%s\\n\nsecond line' "$d"
} | run
m=$(msg)
if [ "$(calls)" = 1 ] && ! ls "$d"/pwned-* >/dev/null 2>&1 && ! printf '%s' "$m" | grep -q "$esc" &&
  [ "$m" = "diskprobe[FAILURE] host=\$(touch $d/pwned-host)\`touch $d/pwned-tick\` target=data;touch $d/pwned-semi type=health rule=[31mred[0m: -n \$(touch $d/pwned-msg) \${HOME?} %s\\n second line" ]; then
  pass "script: hostile fields logged as inert text, control characters removed, nothing executed"
else
  fail "script: hostile input: calls $(calls), files $(ls "$d" | grep pwned | tr '\n' ' '), line: $m"
fi

# 1 MiB of message: bounded, one line, at most 1024 characters of message.
{ printf 'Severity: WARNING\nPlugin: diskprobe\nType: health\n\n'; head -c 1048576 /dev/zero | tr '\0' 'x'; } | run
m=$(msg)
[ "$(calls)" = 1 ] && [ "${#m}" -le 1200 ] && pass "script: 1 MiB message -> one line of ${#m} characters" ||
  fail "script: 1 MiB message: calls $(calls), length ${#m}"

# No blank line, no trailing newline.
printf 'Severity: FAILURE\nPlugin: diskprobe\nType: health\nTypeInstance: stall' | run
[ "$(calls)" = 1 ] && [ "$(msg)" = "diskprobe[FAILURE] host=- target=- type=health rule=stall: (no message)" ] &&
  pass "script: truncated input -> $(msg)" || fail "script: truncated input: $(tr '\n' '|' <"$LOGGER_OUT")"

# ---- no syslog daemon: --file, or a loud failure ---------------------------
okay='Severity: OKAY\nHost: db1\nPlugin: diskprobe\nPluginInstance: data\nType: health\nTypeInstance: ceiling\n\ndiskprobe: OKAY: back to its baseline\n'
printf "$okay" | DISKPROBE_NOTIFY_SOCKET="$d/no-such.sock" run --file "$d/notify.log"
rc=$?
if [ $rc = 0 ] && [ "$(calls)" = 0 ] && [ "$(wc -l <"$d/notify.log")" = 1 ] &&
  grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z diskprobe\[OKAY\] host=db1 target=data type=health rule=ceiling: diskprobe: OKAY: back to its baseline$' "$d/notify.log"; then
  pass "script: no syslog socket -> the line in --file with its time, logger not called: $(cat "$d/notify.log")"
else
  fail "script: no syslog socket with --file: rc $rc, calls $(calls), file: $(cat "$d/notify.log" 2>&1)"
fi
printf "$okay" | run --file "$d/notify.log" --all
[ "$(calls)" = 1 ] && [ "$(wc -l <"$d/notify.log")" = 2 ] &&
  pass "script: with a socket, --file keeps a copy beside syslog (options in any order)" ||
  fail "script: socket and --file: calls $(calls), $(wc -l <"$d/notify.log") lines"
printf "$okay" | DISKPROBE_NOTIFY_SOCKET="$d/no-such.sock" run 2>"$d/lost.err"
rc=$?
[ $rc = 1 ] && [ "$(calls)" = 0 ] && grep -q "no syslog socket ($d/no-such.sock): notification lost: diskprobe\[OKAY\]" "$d/lost.err" &&
  pass "script: no syslog socket and no --file -> exit 1: $(cat "$d/lost.err")" ||
  fail "script: no socket, no --file: rc $rc, calls $(calls), stderr: $(cat "$d/lost.err")"
ln -s "$d/target-of-link" "$d/link.log"
printf "$okay" | DISKPROBE_NOTIFY_SOCKET="$d/no-such.sock" run --file "$d/link.log" 2>"$d/link.err"
rc=$?
[ $rc = 1 ] && [ ! -e "$d/target-of-link" ] && grep -q "is a symlink" "$d/link.err" &&
  pass "script: --file never written through a symlink (exit 1, said)" ||
  fail "script: --file through a symlink: rc $rc, $(ls "$d" | grep target-of-link) $(cat "$d/link.err")"
printf "$okay" | run --bogus 2>"$d/bogus.err"
rc=$?
[ $rc = 2 ] && grep -q "unknown argument '--bogus'" "$d/bogus.err" && pass "script: an unknown argument -> exit 2, said" ||
  fail "script: --bogus: rc $rc, $(cat "$d/bogus.err")"

# ---- a real collectd runs it -----------------------------------------------
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && [ -f /usr/lib/collectd/load.so ] &&
  [ -f /usr/lib/collectd/threshold.so ] && [ -f /usr/lib/collectd/exec.so ]; then
  w="$d/live"
  mkdir -p "$w"
  : >"$d/logger.out"
  chmod 0666 "$d/logger.out"
  cp "$script" "$d/diskprobe_notify.sh" && chmod 0755 "$d/diskprobe_notify.sh"
  # The example, pointed at this copy, with --all (the notification is the
  # threshold plugin's on "load", there is no diskprobe here).
  : >"$w/notify.log"
  chmod 0666 "$w/notify.log"
  sed "s|NotificationExec \"nobody\" \"[^\"]*\".*|NotificationExec \"nobody\" \"$d/diskprobe_notify.sh\" \"--all\" \"--file\" \"$w/notify.log\"|" \
    "$ex/health-notify-exec.conf" >"$w/exec.conf"
  {
    head_conf live
    echo "Include \"$w/exec.conf\""
    printf 'LoadPlugin load\nLoadPlugin threshold\n<Plugin threshold>\n  <Plugin "load">\n    <Type "load">\n      DataSource "shortterm"\n      WarningMin 1000000\n      Hits 1\n    </Type>\n  </Plugin>\n</Plugin>\n'
  } >"$w/collectd.conf"
  # The script's environment comes from collectd: LOGGER_OUT and
  # DISKPROBE_NOTIFY_PATH are exported above.
  collectd -f -C "$w/collectd.conf" >"$w/collectd.out" 2>&1 &
  COLLECTD_PID=$!
  register_pid "$COLLECTD_PID"
  if wait_until 30 grep -q -- '--end--' "$d/logger.out"; then
    pass "live: collectd ran the script as nobody: $(sed -n 6p "$d/logger.out")"
  else
    fail "live: no logger call within 30 s; $(grep -i 'exec\|error' "$w/collectd.log" | tail -3 | tr '\n' ' ')"
  fi
  collectd_stop "$COLLECTD_PID" >/dev/null
  grep -q '^diskprobe\[WARNING\] host=db1 plugin=load/- type=load instance=-: ' "$d/logger.out" &&
    pass "live: collectd's exec format parsed (severity, host, plugin, type)" ||
    fail "live: unexpected line: $(sed -n 6p "$d/logger.out")"
  grep -q 'Z diskprobe\[WARNING\] host=db1 plugin=load/- type=load instance=-: ' "$w/notify.log" &&
    pass "live: and its --file copy, written as nobody" || fail "live: no --file copy: $(head -c 300 "$w/notify.log")"
else
  echo "SKIP: live NotificationExec run (needs root, user nobody, collectd's load, threshold and exec plugins)"
fi

finish notify_examples
