#!/bin/bash
# contrib/packaging/build_deb.sh - builds the diskprobe Debian package from this tree.
#
#   bash contrib/packaging/build_deb.sh [OUTDIR]      the .deb goes to OUTDIR (default .)
#   SKIP_APT=1 bash contrib/packaging/build_deb.sh    do not install missing packages
#   WORKTREE=1 bash contrib/packaging/build_deb.sh    the tracked files as they are in
#                                           the working tree, not HEAD's
#
# Copies the committed source tree (git archive HEAD; with WORKTREE=1 the
# tracked files of the working tree, git ls-files: never build products or
# a configured tree) and contrib/packaging/debian/ as it is in the working tree
# (committed or not) into a temporary directory, puts
# contrib/packaging/debian there as debian/ (the top level of the tree has no debian/
# directory) and runs `dpkg-buildpackage -us -uc -b` (debhelper: dh with
# autoreconf and configure). Prints the path of the .deb on its last line.
#
# Packages: the build tools below are installed when missing (as root, one
# `apt-get update` first if an install fails), with policy-rc.d keeping
# package scripts from starting services. contrib/build/setup.sh does not install
# them: only this script needs them.
# Exit status: 0 built, 1 the build failed, 2 usage, 3 tools missing and
# not installable (tests skip on 3).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
[ $# -le 1 ] || { echo "usage: $0 [OUTDIR]" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

# What a package build needs beyond contrib/build/setup.sh's list: debhelper (dh,
# dh_autoreconf), dpkg-dev (dpkg-buildpackage), lintian; then the
# Build-Depends of contrib/packaging/debian/control.
DEB_TOOLS=(debhelper dh-autoreconf dpkg-dev lintian)
BUILD_DEPS=(collectd-dev libaio-dev pkg-config autoconf automake libtool gcc make)

missing=()
for p in "${DEB_TOOLS[@]}" "${BUILD_DEPS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "${SKIP_APT:-0}" = 1 ] || [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "build-deb: missing ${missing[*]} (install them as root, or run this as root)" >&2
    exit 3
  fi
  echo "build-deb: installing ${missing[*]}"
  policy=/usr/sbin/policy-rc.d
  made_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 0755 "$policy" && made_policy=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  rc=0
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/build-deb-apt.$$.log 2>&1 ||
    { apt-get update -qq >>/tmp/build-deb-apt.$$.log 2>&1 &&
      apt-get install -y -qq --no-install-recommends "${missing[@]}" >>/tmp/build-deb-apt.$$.log 2>&1; } ||
    rc=$?
  [ "$made_policy" = 1 ] && rm -f "$policy"
  if [ $rc != 0 ]; then
    tail -n 5 /tmp/build-deb-apt.$$.log >&2
    rm -f /tmp/build-deb-apt.$$.log
    echo "build-deb: apt-get install ${missing[*]} failed" >&2
    exit 3
  fi
  rm -f /tmp/build-deb-apt.$$.log
fi

work=$(mktemp -d /tmp/diskprobe-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
tree=$work/diskprobe
mkdir -p "$tree"
if ! git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  if [ -e "$src/config.status" ]; then
    echo "build-deb: $src is neither a git checkout nor an unconfigured tree" >&2
    exit 1
  fi
  # an unpacked release tree (make dist), never configured here
  cp -a "$src/." "$tree/"
elif [ "${WORKTREE:-0}" != 1 ]; then
  # HEAD: other work in progress in the working tree stays out
  git -C "$src" archive --format=tar HEAD | tar -x -C "$tree"
else
  # tracked files as they are in the working tree (deleted ones skipped)
  (cd "$src" && git ls-files -z | while IFS= read -r -d '' f; do
    [ -e "$f" ] && printf '%s\0' "$f"
  done | tar --null -T - -cf -) | tar -x -C "$tree"
fi
# The packaging itself, committed or not.
rm -rf "$tree/contrib/packaging/debian"
cp -a "$src/contrib/packaging/debian" "$tree/contrib/packaging/debian"
cp -a "$src/contrib/packaging/debian" "$tree/debian"
mkdir -p "$tree/m4" # AC_CONFIG_MACRO_DIR; git keeps no empty directory

# The version is configure.ac's; the changelog must say the same.
ac_version=$(sed -n 's/^AC_INIT(\[[^]]*\], *\[\([^]]*\)\].*/\1/p' "$tree/configure.ac")
deb_version=$(dpkg-parsechangelog -l "$tree/debian/changelog" -S Version)
if [ "$ac_version" != "${deb_version%%-*}" ]; then
  echo "build-deb: configure.ac says $ac_version, contrib/packaging/debian/changelog $deb_version:" \
    "add a changelog entry (dch -v $ac_version)" >&2
  exit 1
fi

echo "build-deb: building diskprobe $deb_version in $tree from" \
  "$(if [ "${WORKTREE:-0}" = 1 ]; then echo "the working tree"; else git -C "$src" log -1 --format='%h' 2>/dev/null || echo "$src"; fi)"
if ! (cd "$tree" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
  tail -n 30 "$work/build.log" >&2
  echo "build-deb: dpkg-buildpackage failed (the last lines above)" >&2
  exit 1
fi
grep -E '^dpkg-shlibdeps: warning|^dh_[a-z_]*: warning' "$work/build.log" >&2 || true
debs=("$work"/diskprobe_"$deb_version"_*.deb)
[ -f "${debs[0]}" ] || { echo "build-deb: no .deb produced" >&2; exit 1; }
cp "${debs[@]}" "$out/"
cp "$work/build.log" "$out/diskprobe_${deb_version}_build.log"
echo "build-deb: build log $out/diskprobe_${deb_version}_build.log"
for d in "${debs[@]}"; do echo "$out/$(basename "$d")"; done
