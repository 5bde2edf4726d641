# shellcheck shell=bash
# One `<server>_up` and `<server>_healthy` per local server. Sourced by up.sh, status.sh, down.sh.

# ---------------------------------------------------------------- Kafka (KRaft, single node)
kafka_healthy() { port_open "$KB_KAFKA_PORT" && node "$INFRA_DIR/kafka-health.js" >/dev/null 2>&1; }

kafka_up() {
  if kafka_healthy; then return 0; fi
  if pid_alive kafka; then wait_for kafka 120 kafka_healthy; return 0; fi
  port_open "$KB_KAFKA_PORT" && die "port $KB_KAFKA_PORT is taken by something that is not a healthy Kafka"
  maven_fetch kafka
  local home="$KB_HOME/kafka" data="$KB_HOME/data/kafka"
  mkdir -p "$data"
  cat >"$home/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$KB_KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KB_KAFKA_PORT,CONTROLLER://127.0.0.1:$KB_KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KB_KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$data
num.partitions=3
auto.create.topics.enable=true
group.initial.rebalance.delay.ms=0
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
PROPS
  cat >"$home/log4j2.properties" <<PROPS
status = warn
appender.console.type = Console
appender.console.name = console
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.console.ref = console
logger.kafka.name = kafka
logger.kafka.level = warn
logger.apache.name = org.apache.kafka
logger.apache.level = warn
PROPS
  local java_opts=(-Xms256m -Xmx512m -XX:+UseG1GC "-Dlog4j2.configurationFile=$home/log4j2.properties")
  if [[ ! -f "$data/meta.properties" ]]; then
    local cluster
    cluster=$(java -cp "$home/lib/*" "${java_opts[@]}" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)
    java -cp "$home/lib/*" "${java_opts[@]}" kafka.tools.StorageTool format -t "$cluster" \
      -c "$home/server.properties" --standalone >>"$KB_LOG_DIR/kafka.log" 2>&1 ||
      die "formatting Kafka storage failed; see $KB_LOG_DIR/kafka.log"
  fi
  start_daemon kafka java "${java_opts[@]}" -cp "$home/lib/*" kafka.Kafka "$home/server.properties"
  wait_for kafka 120 kafka_healthy
}

# ---------------------------------------------------------------- S3 (s3proxy, filesystem backend)
s3_healthy() {
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$KB_S3_PORT/" 2>/dev/null) || return 1
  [[ "$code" =~ ^[1-5][0-9][0-9]$ ]]
}

s3_up() {
  if s3_healthy; then return 0; fi
  if pid_alive s3proxy; then wait_for s3proxy 60 s3_healthy; return 0; fi
  maven_fetch s3proxy
  local home="$KB_HOME/s3proxy" data="$KB_HOME/data/s3"
  mkdir -p "$data"
  cat >"$home/s3proxy.properties" <<PROPS
s3proxy.endpoint=http://127.0.0.1:$KB_S3_PORT
s3proxy.authorization=aws-v2-or-v4
s3proxy.identity=$S3_ACCESS_KEY_ID
s3proxy.credential=$S3_SECRET_ACCESS_KEY
s3proxy.ignore-unknown-headers=true
jclouds.provider=filesystem
jclouds.filesystem.basedir=$data
PROPS
  start_daemon s3proxy java -Xms64m -Xmx384m -cp "$home/lib/*" org.gaul.s3proxy.Main \
    --properties "$home/s3proxy.properties"
  wait_for s3proxy 60 s3_healthy
}

# ---------------------------------------------------------------- PostgreSQL (Debian package)
pg_healthy() { PGCONNECT_TIMEOUT=3 psql "$DATABASE_URL" -tAc 'select 1' >/dev/null 2>&1; }

pg_as_superuser() { # SQL → runs it as the postgres OS user over the local socket
  local port=$KB_PG_PORT
  # From /, which the postgres user can always enter.
  if ((EUID == 0)); then (cd / && su postgres -c "psql -p $port -v ON_ERROR_STOP=1 -tAc \"$1\""); else (cd / && sudo -u postgres psql -p "$port" -v ON_ERROR_STOP=1 -tAc "$1"); fi
}

pg_up() {
  pg_restart_if_upgraded
  if pg_healthy; then return 0; fi
  if ! port_open "$KB_PG_PORT"; then
    apt_install postgresql
    local version cluster
    version=$(ls /usr/lib/postgresql | sort -V | tail -1)
    # pgvector's build needs the server headers; installing them can upgrade the server package
    # to a newer minor release, so it happens before the server starts, not underneath it.
    apt_install "postgresql-server-dev-$version" make gcc
    cluster=$([[ "$KB_PG_PORT" == 5432 ]] && echo main || echo "kb$KB_PG_PORT")
    if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$version $cluster"; then
      pg_createcluster -p "$KB_PG_PORT" "$version" "$cluster" >/dev/null
    fi
    pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" start
    touch "$RUN_DIR/postgres.started-by-kb"
    echo "$version $cluster" >"$RUN_DIR/postgres.cluster"
    wait_for postgres 60 port_open "$KB_PG_PORT"
  fi
  # Role and database for the suite (local credentials only).
  pg_as_superuser "DO \\\$\\\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'kb') THEN CREATE ROLE kb LOGIN SUPERUSER PASSWORD 'kb'; END IF; END \\\$\\\$;" >/dev/null
  pg_as_superuser "SELECT 1 FROM pg_database WHERE datname = 'kb'" | grep -q 1 ||
    pg_as_superuser "CREATE DATABASE kb OWNER kb" >/dev/null
  wait_for postgres 30 pg_healthy
}

# A package upgrade while the server runs replaces its binary and libraries underneath it: new
# backends then fail to load extensions ("undefined symbol"). Restart a server we started when
# its binary is no longer the one on disk.
pg_restart_if_upgraded() {
  [[ -f "$RUN_DIR/postgres.started-by-kb" && -f "$RUN_DIR/postgres.cluster" ]] || return 0
  local version cluster pid
  read -r version cluster <"$RUN_DIR/postgres.cluster"
  pid=$(head -1 "/var/lib/postgresql/$version/$cluster/postmaster.pid" 2>/dev/null) || return 0
  [[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" == *"(deleted)" ]] || return 0
  say "postgres $version was upgraded while running; restarting it"
  pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" restart
  wait_for postgres 60 pg_healthy
}

# ---------------------------------------------------------------- Redis (Debian package)
redis_healthy() { [[ "$(redis-cli -h 127.0.0.1 -p "$KB_REDIS_PORT" ping 2>/dev/null)" == PONG ]]; }

redis_up() {
  if redis_healthy; then return 0; fi
  port_open "$KB_REDIS_PORT" && die "port $KB_REDIS_PORT is taken by something that is not Redis"
  apt_install redis-server
  redis-server --daemonize yes --bind 127.0.0.1 --port "$KB_REDIS_PORT" --save "" --appendonly no \
    --logfile "$KB_LOG_DIR/redis.log" --pidfile "$RUN_DIR/redis.pid" --dir "$KB_HOME/data"
  wait_for redis 30 redis_healthy
}

# ---------------------------------------------------------------- pgvector (extension in the same server)
# Debian 12 ships no pgvector package, so the extension is compiled once against the installed
# server: its source comes through the Go module proxy (which serves any tagged repository as a
# module zip), the build lives under $KB_HOME/build and `make install` puts it beside the server.
PGVECTOR_VERSION=0.8.1

pgvector_installed() {
  local share; share=$(pg_config_of_server --sharedir) || return 1
  [[ -f "$share/extension/vector--$PGVECTOR_VERSION.sql" ]]
}

pg_config_of_server() { "/usr/lib/postgresql/$(ls /usr/lib/postgresql | sort -V | tail -1)/bin/pg_config" "$@"; }

pgvector_install() {
  pgvector_installed && return 0
  command -v go >/dev/null || die "Go is required to fetch the pgvector source"
  local major; major=$(ls /usr/lib/postgresql | sort -V | tail -1)
  apt_install "postgresql-server-dev-$major" make gcc
  say "building pgvector $PGVECTOR_VERSION for PostgreSQL $major (once)"
  local src
  src=$(cd "$KB_HOME" && GOFLAGS=-mod=mod GOMODCACHE="$KB_HOME/cache/gomod" \
    go mod download -json "github.com/pgvector/pgvector@v$PGVECTOR_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -n "$src" && -d "$src" ]] || die "could not fetch the pgvector $PGVECTOR_VERSION source"
  local build="$KB_HOME/build/pgvector-$PGVECTOR_VERSION"
  rm -rf "$build" && mkdir -p "$KB_HOME/build" && cp -r "$src" "$build" && chmod -R u+w "$build"
  local sudo=""; ((EUID == 0)) || sudo="sudo"
  local pg_config="/usr/lib/postgresql/$major/bin/pg_config"
  # with_llvm=no: no JIT bitcode, so clang is not needed.
  (cd "$build" && make -j2 with_llvm=no PG_CONFIG="$pg_config" &&
    $sudo make install with_llvm=no PG_CONFIG="$pg_config") >"$KB_LOG_DIR/pgvector-build.log" 2>&1 ||
    die "building pgvector failed; see $KB_LOG_DIR/pgvector-build.log"
}

pgvector_healthy() {
  PGCONNECT_TIMEOUT=3 psql "$VECTOR_DATABASE_URL" -tAc "select extversion from pg_extension where extname = 'vector'" 2>/dev/null | grep -q .
}

# The vector store's own database in the Postgres cluster pg_up started.
pgvector_up() {
  if pgvector_healthy; then return 0; fi
  pgvector_install
  pg_restart_if_upgraded
  pg_as_superuser "SELECT 1 FROM pg_database WHERE datname = 'kb_vectors'" | grep -q 1 ||
    pg_as_superuser "CREATE DATABASE kb_vectors OWNER kb" >/dev/null
  psql "$VECTOR_DATABASE_URL" -tAc 'CREATE EXTENSION IF NOT EXISTS vector' >/dev/null
  wait_for pgvector 30 pgvector_healthy
}

# ---------------------------------------------------------------- embedding model (files only)
model_healthy() { [[ -f "$EMBEDDING_MODEL_DIR/$EMBEDDING_MODEL/onnx/model_quantized.onnx" ]]; }
model_up() { model_healthy || bash "$INFRA_DIR/fetch-model.sh"; }
