# shellcheck shell=bash
# Helpers for the infra scripts.

INFRA_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=env.sh
source "$INFRA_DIR/env.sh"
RUN_DIR="$KB_HOME/run"
mkdir -p "$KB_HOME" "$KB_LOG_DIR" "$RUN_DIR" "$KB_HOME/data"

say() { printf 'infra: %s\n' "$*"; }
die() { printf 'infra: error: %s\n' "$*" >&2; exit 1; }

# port_open PORT → true when something accepts TCP connections on 127.0.0.1:PORT.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# wait_for NAME SECONDS COMMAND... → polls COMMAND until it succeeds.
wait_for() {
  local name=$1 seconds=$2; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS > deadline)); then
      die "$name did not become healthy within ${seconds}s; see $KB_LOG_DIR"
    fi
    sleep 0.5
  done
}

# pid_alive NAME → true when the pid file of NAME names a running process.
pid_alive() {
  local file="$RUN_DIR/$1.pid"
  [[ -f "$file" ]] && kill -0 "$(cat "$file")" 2>/dev/null
}

# start_daemon NAME COMMAND... → runs COMMAND detached, logs to $KB_LOG_DIR/NAME.log, records its pid.
start_daemon() {
  local name=$1; shift
  rotate_log "$KB_LOG_DIR/$name.log"
  setsid nohup "$@" >>"$KB_LOG_DIR/$name.log" 2>&1 < /dev/null &
  echo $! >"$RUN_DIR/$name.pid"
}

# rotate_log FILE → a log over 64 MiB becomes FILE.1 (replacing the previous one), so a server's log
# restarts empty instead of growing for as long as the machine is used.
rotate_log() {
  local file=$1 size
  size=$(stat -c %s "$file" 2>/dev/null) || return 0
  ((size > 64 * 1024 * 1024)) && mv -f "$file" "$file.1"
  return 0
}

# stop_daemon NAME → SIGTERM, then SIGKILL after 20 s.
stop_daemon() {
  local name=$1 file="$RUN_DIR/$1.pid"
  [[ -f "$file" ]] || return 0
  local pid; pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

# apt_install PACKAGE... → installs Debian packages that are missing.
apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  ((${#missing[@]} == 0)) && return 0
  say "installing ${missing[*]} from Debian packages"
  local sudo=""; ((EUID == 0)) || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq -o DPkg::Lock::Timeout=120 "${missing[@]}" >/dev/null
}

# maven_fetch NAME → copies the runtime jars of maven/NAME/pom.xml into $KB_HOME/NAME/lib once.
maven_fetch() {
  local name=$1 dest="$KB_HOME/$1/lib"
  local stamp="$dest/.pom.sha256"
  local want; want=$(sha256sum "$INFRA_DIR/maven/$name/pom.xml" | cut -d' ' -f1)
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then return 0; fi
  say "fetching $name jars with Maven (once)"
  rm -rf "$dest"
  mvn -q -B -f "$INFRA_DIR/maven/$name/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$dest" >"$KB_LOG_DIR/maven-$name.log" 2>&1 ||
    die "Maven could not fetch $name; see $KB_LOG_DIR/maven-$name.log"
  echo "$want" >"$stamp"
}
