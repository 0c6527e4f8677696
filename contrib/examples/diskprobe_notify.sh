#!/bin/sh
# diskprobe_notify.sh - collectd NotificationExec handler: one syslog line per
# diskprobe notification (health transitions, stalls, probe errors, and the
# threshold plugin's notifications on diskprobe's values), for hosts that
# keep RRD files and have no Prometheus/Alertmanager to page from.
#
# collectd's exec plugin writes the notification to stdin: header lines
#   Severity: FAILURE|WARNING|OKAY
#   Time: 1700000000.123
#   Host: db1
#   Plugin: diskprobe
#   PluginInstance: data           (the target)
#   Type: health                   (health, stalled, probe_errors, ...)
#   TypeInstance: baseline         (for health: the rule)
# then a blank line and the message. This script writes, with logger(1):
#   diskprobe[FAILURE] host=db1 target=data type=health rule=baseline: <message>
# at priority crit (FAILURE), warning (WARNING) or notice (OKAY), facility
# daemon, tag diskprobe. Notifications of other plugins are ignored unless
# --all is given.
#
# Options: --all (every plugin's notifications); --file PATH: also append
# each line, with its UTC time, to PATH (created 0640; never through a
# symlink). Without a syslog daemon there is no syslog socket (/dev/log:
# a Debian 12 host with neither systemd nor rsyslog) and logger(1) would
# drop the line without an error: then the line goes to PATH alone, and
# with no --file either the script says so on stderr and exits 1 -- but
# collectd's exec plugin shows neither, so give --file on such a host (the
# example health-notify-exec.conf does). DISKPROBE_NOTIFY_SOCKET names
# another socket to check (tests).
#
# Install: install -m 0755 diskprobe_notify.sh /usr/local/lib/collectd/
# and see health-notify-exec.conf. Runs as an unprivileged user (the exec
# plugin refuses root). Input is data, never code: no eval, every field is
# stripped of control characters and cut to a sane length, the message is
# passed to logger after "--".
set -u
PATH=${DISKPROBE_NOTIFY_PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH
all= file=
while [ $# -gt 0 ]; do
	case $1 in
	--all) all=1 ;;
	--file)
		[ $# -ge 2 ] || { echo "diskprobe_notify.sh: --file needs a PATH" >&2; exit 2; }
		file=$2
		shift
		;;
	*) echo "diskprobe_notify.sh: unknown argument '$1' (--all, --file PATH)" >&2; exit 2 ;;
	esac
	shift
done
socket=${DISKPROBE_NOTIFY_SOCKET:-/dev/log}

# clean VALUE MAX: no control characters, at most MAX characters, trimmed.
clean() {
	printf '%s' "$1" | tr -d '[:cntrl:]' | cut -c "1-$2" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'
}

# At most 64 KiB of input: collectd's messages are under 256 bytes.
head -c 65536 | {
	severity='' host='' plugin='' pinst='' type='' tinst='' message=''
	while IFS= read -r line || [ -n "$line" ]; do
		case $line in
		'' | "$(printf '\r')") break ;;
		Severity:*) severity=${line#Severity:} ;;
		Host:*) host=${line#Host:} ;;
		Plugin:*) plugin=${line#Plugin:} ;;
		PluginInstance:*) pinst=${line#PluginInstance:} ;;
		Type:*) type=${line#Type:} ;;
		TypeInstance:*) tinst=${line#TypeInstance:} ;;
		esac
	done
	while IFS= read -r line || [ -n "$line" ]; do
		message="$message${message:+ }$line"
	done

	severity=$(clean "$severity" 16)
	plugin=$(clean "$plugin" 64)
	[ -n "$all" ] || [ "$plugin" = diskprobe ] || exit 0
	host=$(clean "$host" 128)
	pinst=$(clean "$pinst" 128)
	type=$(clean "$type" 64)
	tinst=$(clean "$tinst" 128)
	message=$(clean "$message" 1024)

	case $severity in
	FAILURE) prio=crit ;;
	WARNING) prio=warning ;;
	OKAY) prio=notice ;;
	*) prio=info severity=UNKNOWN ;;
	esac
	if [ "$type" = health ]; then
		what="rule=${tinst:-?}"
	else
		what="instance=${tinst:--}"
	fi
	[ "$plugin" = diskprobe ] && who="target=${pinst:--}" || who="plugin=$plugin/${pinst:--}"
	line="diskprobe[$severity] host=${host:--} $who type=${type:--} $what: ${message:-(no message)}"
	sent=
	if [ -S "$socket" ] && logger -t diskprobe -p "daemon.$prio" -- "$line"; then
		sent=syslog
	fi
	if [ -n "$file" ]; then
		if [ -L "$file" ]; then
			echo "diskprobe_notify.sh: $file is a symlink: not writing through it" >&2
		elif (umask 027 && printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$line" >>"$file"); then
			sent=${sent:+$sent and }$file
		fi
	fi
	if [ -z "$sent" ]; then
		echo "diskprobe_notify.sh: no syslog socket ($socket)${file:+ and $file not writable}: notification lost: $line" >&2
		exit 1
	fi
}
