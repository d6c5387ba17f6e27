#!/usr/bin/env bash
# Starts nginx with the nchan module for the load tester, in the foreground (exec: the caller's pid is the master's):
#   loadtest/nchan/start.sh PORT DIR
# DIR is a scratch directory: the configuration made from nginx.conf.in, the pid file, logs and temporary files go
# there. Needs Debian's nginx and libnginx-mod-nchan (loadtest/compare.sh installs them).
set -euo pipefail
port=${1:?usage: start.sh PORT DIR}
dir=${2:?usage: start.sh PORT DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
sed -e "s#@PORT@#$port#g" -e "s#@DIR@#$dir#g" "$(dirname "$0")/nginx.conf.in" > "$dir/nginx.conf"
exec nginx -p "$dir" -e "$dir/nginx-error.log" -c "$dir/nginx.conf"
