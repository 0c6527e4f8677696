#!/bin/bash
# btrfs_overlay.sh - a Path on btrfs or overlayfs is resolved to the disk
# below it (its st_dev is an anonymous 0:N that sysfs does not know): a btrfs
# over two loop devices with two subvolumes, and an overlay whose upper layer
# is on an ext4 loop device. `diskprobe watch` on all three prints the loop
# device and its media class (virtual, not "unknown"); the two subvolumes
# share one worker (their rounds never overlap, with splay off two workers
# would start them together); the btrfs's devices are named once, the
# first by kernel name being the one probed.
set -u
. "$(dirname "$0")/lib.sh"
need root loop
need_cmd mkfs.btrfs btrfs-progs
need_cmd python3
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null
grep -qw overlay /proc/filesystems || skip "no overlayfs in this kernel"
grep -qw btrfs /proc/filesystems || modprobe btrfs 2>/dev/null
grep -qw btrfs /proc/filesystems || skip "no btrfs in this kernel"
dir=$(make_tmpdir)
la=$(make_loop 300 "$dir") || exit
lb=$(make_loop 300 "$dir") || exit
le=$(make_loop 128 "$dir") || exit
mkfs.btrfs -q -f -d single -m raid1 "$la" "$lb" >/dev/null 2>&1 || die "mkfs.btrfs failed"
mkdir -p "$dir/b" && mount "$la" "$dir/b" || die "mount btrfs failed"
register_mount "$dir/b"
btrfs -q subvolume create "$dir/b/sv1" >/dev/null && btrfs -q subvolume create "$dir/b/sv2" >/dev/null ||
  die "btrfs subvolume create failed"
make_fs "$le" "$dir/e"
mkdir -p "$dir/e/lower" "$dir/e/upper" "$dir/e/work" "$dir/ov"
mount -t overlay overlay -o "lowerdir=$dir/e/lower,upperdir=$dir/e/upper,workdir=$dir/e/work" "$dir/ov" ||
  die "overlay mount failed"
register_mount "$dir/ov"
for p in "$dir/b/sv1" "$dir/b/sv2" "$dir/ov"; do echo "$p: st_dev $(stat -c %D "$p") (hex)"; done

first=$(printf '%s\n' "${la##*/}" "${lb##*/}" | LC_ALL=C sort | head -1)
"$DISKPROBE" watch --count 2 --interval 2s --duration 0.5s --duty-cycle 100 \
  --file-size 16M --layout-rate 0 --format json "$dir/b/sv1" "$dir/b/sv2" "$dir/ov" \
  >"$dir/watch.json" 2>"$dir/watch.err" || fail "watch failed: $(tail -3 "$dir/watch.err")"
sed 's/^/  /' "$dir/watch.err"

# per target: the device of its results and the media class of its verdicts
# (from round 2: watch may print a first round before the scheduler has
# published the target's device, "unknown" on any filesystem)
python3 - "$dir/watch.json" >"$dir/seen" <<'PY'
import json, sys
dev, media, spans = {}, {}, {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    t = r.get("target", "").rsplit("/", 2)[-2] if "target" in r else None
    if "probe" in r and r["round"] >= 2:
        dev.setdefault(t, set()).add(r["device"])
    if "probe" in r:
        spans.setdefault(t, []).append((r["time"] - r["wall_s"], r["time"]))
    if "verdict" in r and r["round"] >= 2:
        media.setdefault(t, set()).add(r["verdict"]["media"])
for t in sorted(dev):
    print(t, ",".join(sorted(dev[t])), ",".join(sorted(media.get(t, []))))
# rounds of sv1 and sv2 that overlap in time
a, b = spans.get("sv1", []), spans.get("sv2", [])
print("overlaps", sum(1 for x in a for y in b if x[0] < y[1] and y[0] < x[1]))
PY
cat "$dir/seen"
check() { # check TARGET DEVICE
  local line
  line=$(grep "^$1 " "$dir/seen")
  [ "$(echo "$line" | cut -d' ' -f2)" = "$2" ] && pass "$1: device $2" || fail "$1: expected device $2, saw '$line'"
  [ "$(echo "$line" | cut -d' ' -f3)" = virtual ] && pass "$1: media class virtual (a loop device)" ||
    fail "$1: expected media class virtual, saw '$line'"
}
for t in "b/sv1 $first" "b/sv2 $first" "ov ${le##*/}"; do
  read -r sub want <<<"$t"
  grep -qF "laid out probe file $dir/$sub/diskprobe.probe (16777216 bytes) on device $want." "$dir/watch.err" &&
    pass "$sub: laid out on device $want" || fail "$sub: no layout line naming device $want"
done
check sv1 "$first"
check sv2 "$first"
check ov "${le##*/}"
[ "$(awk '$1 == "overlaps" { print $2 }' "$dir/seen")" = 0 ] &&
  pass "the two subvolumes' rounds never overlap (one worker for the disk)" ||
  fail "rounds of sv1 and sv2 overlapped: two workers on one disk"
line=$(grep -m1 -i "btrfs spans devices .*: probed as on $first" "$dir/watch.err")
case "$line" in
*"${la##*/}"*"${lb##*/}"* | *"${lb##*/}"*"${la##*/}"*) pass "the btrfs's devices are named: ${line#diskprobe watch: }" ;;
*) fail "no line naming both of the btrfs's devices (${la##*/}, ${lb##*/})" ;;
esac
grep -q 'unknown' "$dir/seen" && fail "a device or media class is unknown"
finish btrfs_overlay "cat $dir/watch.err"
