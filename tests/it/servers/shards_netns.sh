#!/usr/bin/env bash
# Run inside `unshare -rn` by tests/it/shard_nginx.rs: nginx in this network namespace on a
# bridge (10.9.0.1), and SHARDS shards of spate, each in a network namespace of its own joined
# to the bridge by a veth pair (10.9.0.2, .3, ...), all starting at one instant. Nothing leaves
# the namespaces this script makes.
#
#   shards_netns.sh SPATE DIR SHARDS AT_MS -- RUN FLAGS...
#
# Writes DIR/shard-K.json (each shard's result) and DIR/shard.log (nginx: "$msec $http_x_shard").
set -euo pipefail
spate=$1 dir=$2 shards=$3 at=$4
shift 5
ip link set lo up
ip link add br0 type bridge
ip addr add 10.9.0.1/24 dev br0
ip link set br0 up
holders=()
for ((k = 0; k < shards; k++)); do
  unshare -n sleep 120 &
  holders+=("$!")
done
for ((k = 0; k < shards; k++)); do
  pid=${holders[k]}
  # The holder must be in its namespace before the veth end can move there.
  until [ "$(readlink "/proc/$pid/ns/net")" != "$(readlink /proc/self/ns/net)" ]; do sleep 0.01; done
  ip link add "v$k" type veth peer name "p$k"
  ip link set "p$k" netns "$pid"
  ip link set "v$k" master br0
  ip link set "v$k" up
  nsenter -t "$pid" -n ip link set lo up
  nsenter -t "$pid" -n ip addr add "10.9.0.$((k + 2))/24" dev "p$k"
  nsenter -t "$pid" -n ip link set "p$k" up
done
mkdir -p "$dir/tmp"
# In the user namespace only this user is mapped: nginx must not switch to nobody.
cat > "$dir/nginx.conf" <<CONF
user $(id -un) $(id -gn);
master_process off;
daemon off;
error_log $dir/error.log;
pid $dir/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $dir/tmp;
  proxy_temp_path $dir/tmp;
  fastcgi_temp_path $dir/tmp;
  uwsgi_temp_path $dir/tmp;
  scgi_temp_path $dir/tmp;
  log_format shard '\$msec \$http_x_shard';
  server {
    listen 10.9.0.1:8080;
    access_log $dir/shard.log shard;
    location / { return 200 "ok\n"; }
  }
}
CONF
nginx -p "$dir" -c "$dir/nginx.conf" &
server=$!
until (exec 3<>/dev/tcp/10.9.0.1/8080) 2>/dev/null; do
  kill -0 "$server" 2>/dev/null || { cat "$dir/error.log" >&2; exit 1; }
  sleep 0.05
done
runs=()
for ((k = 0; k < shards; k++)); do
  nsenter -t "${holders[k]}" -n "$spate" --no-progress --format json --shard "$k/$shards" \
    -H "X-Shard: $k" --start-at "$at" --start-deadline 5s "$@" http://10.9.0.1:8080/ \
    > "$dir/shard-$k.json" &
  runs+=("$!")
done
code=0
for r in "${runs[@]}"; do wait "$r" || code=$?; done
kill "$server" "${holders[@]}" 2>/dev/null || true
exit "$code"
