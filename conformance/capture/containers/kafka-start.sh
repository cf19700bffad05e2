#!/bin/sh
# Entry point of the kafka-conformance/kafka images (conformance/capture/containers/images.py).
# The backend copies /opt/kafka/run/ in once the container runs (the broker must advertise the
# host-mapped port, known only then), ending with the file `ready`. Then: ZooKeeper in the
# background when zookeeper.args exists, `StorageTool format` when format.args exists, and
# the broker as PID 1, so `docker stop` (SIGTERM) is a clean broker shutdown. Every *.args file
# holds one command-line argument per line (written by conformance.capture.jvm's functions).
R=/opt/kafka/run
while [ ! -f "$R/ready" ]; do sleep 0.1; done
mkdir -p "$R/logs"
run() {
    file=$1
    set --
    while IFS= read -r arg || [ -n "$arg" ]; do set -- "$@" "$arg"; done < "$file"
    "$@"
}
if [ -f "$R/zookeeper.args" ]; then
    run "$R/zookeeper.args" > "$R/zookeeper.out" 2>&1 &
fi
if [ -f "$R/format.args" ]; then
    run "$R/format.args" > "$R/format.out" 2>&1 || { cat "$R/format.out"; exit 1; }
fi
file=$R/broker.args
set --
while IFS= read -r arg || [ -n "$arg" ]; do set -- "$@" "$arg"; done < "$file"
exec "$@"
