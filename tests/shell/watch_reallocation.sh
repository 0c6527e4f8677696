#!/bin/bash
# watch_reallocation.sh - a probe file re-allocated under `diskprobe watch`
# while a round reads it is never reported as a measurement. Two ways an
# administrator's tool does it, each keeping the inode, the size and
# st_blocks, so only the header and the extent map tell: ftruncate(0) then
# posix_fallocate over the whole file (every extent unwritten, the header
# zeros), and `fallocate -z` (util-linux: a zeroed range over the data).
# Reads of unwritten extents return zeros without touching the disk, which
# once showed as 15x the IOPS at a 3 us p50. Each time: one log line names
# the target and what changed, the round in flight is printed unmeasured
# (0 ops, no latency), the file is laid out again (fully allocated), and
# the next round measures the disk again: its IOPS are printed next to the
# rounds before the change (a ratio; no fake figure is ever printed), and
# nothing is said as an I/O error of the disk.
# On a loop-mounted ext4 (FIEMAP, unwritten extents). The change lands in
# the middle of a round by waiting for a round to end and then half the
# gap plus a little; a change that lands between rounds is caught before
# the next one instead (also one line), and the test tries again (3 times).
set -u
. "$(dirname "$0")/lib.sh"
need root loop
need_cmd fallocate util-linux
need_cmd python3
dir=$(make_tmpdir)
dev=$(make_loop 256 "$dir") || exit
make_fs "$dev" "$dir/mnt"
out="$dir/watch.json" err="$dir/watch.err"
f="$dir/mnt/p/diskprobe.probe"
"$DISKPROBE" watch --interval 3s --duration 2s --duty-cycle 100 \
  --file-size 64M --layout-rate 0 --format json "$dir/mnt/p" >"$out" 2>"$err" &
register_pid $!

samples() { grep -c '"probe"' "$out"; }
discards() { grep -c 'figures are discarded' "$err"; }
# field F (ops, iops) of every probe result line, one a line
field() {
  python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if "probe" in r: print(r[sys.argv[2]])' "$out" "$1"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "none") }'; }
wait_samples() { wait_until 120 sh -c "[ \$(grep -c '\"probe\"' '$out') -ge $1 ]"; }

wait_samples 3 || die "watch printed fewer than 3 rounds: $(tail -3 "$err")"
base=$(field iops | median)
echo "baseline: $base IOPS (median of the first 3 rounds)"
# ino size blocks of the probe file
ident() { stat -c '%i %s %b' "$f"; }

realloc() { # ftruncate(0) then posix_fallocate over the whole size, one process
  python3 -c 'import os,sys
fd = os.open(sys.argv[1], os.O_RDWR); n = os.fstat(fd).st_size
os.ftruncate(fd, 0); os.posix_fallocate(fd, 0, n); os.close(fd)' "$f"
}
zero() { fallocate -z -o 1048576 -l $(($(stat -c %s "$f") - 1048576)) "$f"; }

for how in realloc zero; do
  caught=
  for try in 1 2 3; do
    n=$(samples) d0=$(discards)
    wait_samples $((n + 1)) || die "$how: no round ended"
    sleep 1.5 # the gap is 1 s, the round 2 s: this is half-way through it
    before=$(ident)
    $how || die "$how: the change itself failed"
    after=$(ident)
    # the next measured round after the one the change hit
    wait_samples $((n + 3)) || die "$how: watch stopped printing rounds: $(tail -3 "$err")"
    if [ "$(discards)" -gt "$d0" ]; then
      caught=1
      break
    fi
    echo "  $how, try $try: landed between rounds (caught before the next one); again"
  done
  [ "$before" = "$after" ] && pass "$how: inode, size and blocks unchanged ($after): only header and extents tell" ||
    echo "  $how: inode/size/blocks $before -> $after"
  if [ -n "$caught" ]; then
    pass "$how: $(grep 'figures are discarded' "$err" | tail -1 | sed 's/^diskprobe watch: //')"
  else
    fail "$how: no round discarded in 3 tries: $(tail -3 "$err")"
  fi
  ops=$(field ops | sed -n "$((n + 2))p")
  [ "$ops" = 0 ] && pass "$how: the round it hit is printed unmeasured (0 ops)" ||
    fail "$how: the round it hit printed $ops ops"
  now=$(field iops | sed -n "$((n + 3))p")
  echo "$how: next round $now IOPS, baseline $base: ratio $(num_calc "$now / $base" %.2f)"
  ratio_cmp "$now" "$base" '<' 5 && ratio_cmp "$now" "$base" '>' 0.2 &&
    pass "$how: the next round measures the disk again" ||
    fail "$how: the next round's $now IOPS is not near the baseline $base"
  h=$(python3 -c 'import os,sys; fd=os.open(sys.argv[1],os.O_RDONLY); print(os.lseek(fd,0,os.SEEK_HOLE))' "$f")
  num_cmp "$h" '==' "$(stat -c %s "$f")" && pass "$how: laid out again, no hole" || fail "$how: a hole at $h"
done
# whatever landed where, no round printed a figure the disk did not make
fake=$(field iops | awk -v b="$base" '$1 > 5 * b' | wc -l)
[ "$fake" = 0 ] && pass "no round printed more than 5x the baseline IOPS ($(samples) rounds)" ||
  fail "$fake round(s) printed more than 5x the baseline $base IOPS: $(field iops | tr '\n' ' ')"
# reads that met the truncation (ftruncate before posix_fallocate) are the
# file's doing, not the disk's: never said as I/O errors or a FAILURE
grep -qE 'I/O errors|FAILURE' "$err" && fail "an I/O error or FAILURE was said: $(grep -m1 -E 'I/O errors|FAILURE' "$err")" ||
  pass "no I/O error or FAILURE said for the file's changes"
finish watch_reallocation "tail -20 $err"
