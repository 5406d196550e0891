#!/bin/sh
# The modes of the output folder and of every state file after a demo build (docs/reference/cache.md).
#
#     benchmarks/file_modes.sh [REPO]      (default: this checkout)
#
# Builds examples/demo (with snapshot: true) in a temporary copy, prints `stat -c '%a %n'` of the output
# folder, the cache folder and the files in it, then sets the output to 0750 and builds again. The
# companions (-wal, -shm) exist only while a database is open: they are listed with the state and the
# push database held open (as serve holds them).
set -e
repo=$(cd "${1:-$(dirname "$0")/..}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$repo/examples" "$tmp/examples"
cd "$tmp"
printf 'snapshot: true\n' >> examples/demo/sites.yaml
echo "umask $(umask)"
"$repo/.venv/bin/syndicator" build --config examples/demo/sites.yaml --now 2026-01-15T12:00:00Z >/dev/null 2>&1
echo "-- after a first build"
stat -c '%a %n' public cache cache/* public/index.html public/syndicator-state.json.gz
chmod 750 public
"$repo/.venv/bin/syndicator" build --config examples/demo/sites.yaml --now 2026-01-15T13:00:00Z >/dev/null 2>&1
echo "-- after chmod 750 public and a second build"
stat -c '%a %n' public
echo "-- with state.sqlite and push.sqlite open"
"$repo/.venv/bin/python" - <<'PY'
import os
from pathlib import Path
from syndicator.state.pushstate import PushState
from syndicator.state.store import Store
store, push = Store.open(Path("cache")), PushState.open(Path("cache"))
store._db.execute("CREATE TABLE IF NOT EXISTS t (x)")  # a write, so the -wal holds something
push.keep("probe", "1")
for name in sorted(os.listdir("cache")):
    print(f"{os.stat(Path('cache', name)).st_mode & 0o777:o} cache/{name}")
store.close()
push.close()
PY
