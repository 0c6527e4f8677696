#!/bin/bash
# metrics_table.sh - the metric table (src/metrics.c) is the one place the
# series diskprobe dispatches are declared; this checks what is derived
# from it or must agree with it:
#
#  (a) plugin/diskprobe.types.db is exactly `diskprobe metrics --types-db`;
#  (b) README's catalogue, between <!-- metrics:begin --> and
#      <!-- metrics:end -->, is exactly `diskprobe metrics --markdown`;
#  (c) every collectd_diskprobe_* name the dashboards, alerts.yml,
#      alerts_test.yml and the Grafana alert rules query is a name
#      write_prometheus gives a series of the table
#      (`diskprobe metrics --prometheus`);
#  (d) every type the table says collectd's own types.db provides is there,
#      with the same data sources (`diskprobe metrics --collectd-types`),
#      and none of the types we ship is (it would clash with collectd's).
#
# COLLECTD_TYPES_DB names collectd's types.db (/usr/share/collectd/types.db).
# Exit 0 pass, 1 fail.
set -u
. "$(dirname "$0")/lib.sh"
d=$(make_tmpdir) || exit 1
types_db=${COLLECTD_TYPES_DB:-/usr/share/collectd/types.db}
readme=$top_srcdir/README.md
ours=$top_srcdir/plugin/diskprobe.types.db

metrics() { "$DISKPROBE" metrics "$1" >"$d/${1#--}" || die "diskprobe metrics $1 failed"; }
metrics --types-db
metrics --markdown
metrics --prometheus
metrics --collectd-types

# (a) the committed types.db
if diff -u --label "plugin/diskprobe.types.db" --label "diskprobe metrics --types-db" \
  "$ours" "$d/types-db"; then
  pass "plugin/diskprobe.types.db is generated from the table"
else
  fail "plugin/diskprobe.types.db differs from the table (diff above); regenerate it:
  $DISKPROBE metrics --types-db >$ours"
fi

# (b) README's catalogue
if [ "$(grep -c '^<!-- metrics:\(begin\|end\) -->$' "$readme")" != 2 ]; then
  fail "$readme needs one <!-- metrics:begin --> and one <!-- metrics:end --> line"
else
  awk '/^<!-- metrics:end -->$/ {p=0} p {print} /^<!-- metrics:begin -->$/ {p=1}' \
    "$readme" >"$d/have"
  if diff -u --label "README.md (metric catalogue)" --label "diskprobe metrics --markdown" \
    "$d/have" "$d/markdown"; then
    pass "README's metric catalogue is generated from the table"
  else
    fail "README's metric catalogue differs from the table (diff above); regenerate it:
  cd $top_srcdir && { sed '/^<!-- metrics:begin -->\$/q' README.md; $DISKPROBE metrics --markdown;
    sed -n '/^<!-- metrics:end -->\$/,\$p' README.md; } >README.md.new && mv README.md.new README.md"
  fi
fi

# (c) the names the dashboards and alerts query. YAML comments are prose
# (alerts.yml explains the naming rule with a placeholder), not queries.
cut -d' ' -f1 "$d/prometheus" | sort -u >"$d/valid"
[ -s "$d/valid" ] || fail "diskprobe metrics --prometheus printed no names"
queried=0 bad=0
for f in "$top_srcdir"/dashboards/*.json "$top_srcdir"/dashboards/alerts.yml \
  "$top_srcdir"/dashboards/alerts_test.yml \
  "$top_srcdir"/dashboards/grafana-provisioning/alerting/diskprobe-rules.yml; do
  [ -f "$f" ] || { fail "${f#"$top_srcdir"/}: missing"; continue; }
  case $f in *.yml) strip='s/(^|[[:space:]])#.*//' ;; *) strip='' ;; esac
  while IFS=: read -r line name; do
    queried=$((queried + 1))
    if ! grep -qxF "$name" "$d/valid"; then
      fail "${f#"$top_srcdir"/}:$line: $name is not a series of the metric table (src/metrics.c)"
      bad=$((bad + 1))
    fi
  done < <(sed -E "$strip" "$f" | grep -noE 'collectd_diskprobe_[A-Za-z0-9_]*')
done
[ "$queried" -gt 0 ] || fail "no collectd_diskprobe_* name found in the dashboards"
[ "$bad" = 0 ] && [ "$queried" -gt 0 ] &&
  pass "the dashboards' and alerts' $queried metric names are all in the table"

# (d) collectd's own types.db
if [ ! -r "$types_db" ]; then
  fail "$types_db not readable (collectd-core installs it; or set COLLECTD_TYPES_DB)"
else
  bad=0
  while read -r type ds; do
    have=$(awk -v t="$type" '$1 == t { $1 = ""; sub(/^ +/, ""); print; exit }' "$types_db")
    if [ -z "$have" ]; then
      fail "type $type: the table says collectd's types.db has it; $types_db does not"
      bad=$((bad + 1))
    elif [ "$(echo "$have" | tr -s ' ')" != "$(echo "$ds" | tr -s ' ')" ]; then
      fail "type $type: the table has '$ds', $types_db has '$have'"
      bad=$((bad + 1))
    fi
  done <"$d/collectd-types"
  while read -r type _; do
    case $type in '#'* | '') continue ;; esac
    if awk -v t="$type" '$1 == t { f = 1 } END { exit !f }' "$types_db"; then
      fail "type $type is shipped in diskprobe.types.db but $types_db has it too"
      bad=$((bad + 1))
    fi
  done <"$d/types-db"
  [ -s "$d/collectd-types" ] || { fail "diskprobe metrics --collectd-types printed nothing"; bad=1; }
  [ "$bad" = 0 ] && pass "collectd's types.db has the $(wc -l <"$d/collectd-types") types the table takes from it, and none of ours"
fi

finish metrics_table
