# shellcheck shell=bash
# .ci/services.sh: private Redis and PostgreSQL instances for the integration
# tests of runtime/redisstore and runtime/sqlstore. Source it, then:
#
#	start_redis          # exports CIRCUITGEN_REDIS_URL (unix socket)
#	start_redis_cluster  # exports CIRCUITGEN_REDIS_CLUSTER (three masters on loopback, host:port,...)
#	start_redis_tls      # exports CIRCUITGEN_REDIS_TLS_URL (rediss://, loopback) and
#	                     # CIRCUITGEN_REDIS_TLS_CA (the self-signed CA that signed its certificate)
#	start_postgres       # exports CIRCUITGEN_POSTGRES_DSN (unix socket)
#	start_postgres_standby  # after it: exports CIRCUITGEN_POSTGRES_STANDBY_DSN,
#	                     # a hot standby of that server (unix socket)
#	stop_services        # stops them all by pid and removes their directories
#
# A cluster needs TCP (its bus is port + 10000): its three redis-servers
# listen on 127.0.0.1 at free ports, as does the TLS server.
#
# Each instance lives in its own temporary directory, listens only on a unix
# socket there (no TCP port to collide with) and is stopped by its pid.
# Redis runs with the settings the Redis store's guarantees need
# (docs/distributed-stores.md): appendonly yes, appendfsync everysec,
# maxmemory-policy noeviction. PostgreSQL refuses to run as root, so as root it runs as the
# "postgres" user (Debian's postgresql package creates it) or $CIRCUITGEN_PG_USER.
# $CIRCUITGEN_PG_MAX_CONNECTIONS sets PostgreSQL's max_connections (200).

_circuitgen_redis_dir=""
_circuitgen_pg_dir=""
_circuitgen_standby_dir=""
_circuitgen_pg_bindir=""
_circuitgen_pg_run=()
_circuitgen_cluster_dir=""
_circuitgen_tls_dir=""

# _circuitgen_wait polls "$@" for up to 30s.
_circuitgen_wait() {
	local i
	for ((i = 0; i < 300; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

start_redis() {
	local bin
	bin=$(command -v redis-server) || { echo "start_redis: redis-server not found (apt-get install -y redis-server)" >&2; return 1; }
	_circuitgen_redis_dir=$(mktemp -d "${TMPDIR:-/tmp}/circuitgen-redis.XXXXXX") || return 1
	local d=$_circuitgen_redis_dir
	"$bin" --port 0 --unixsocket "$d/redis.sock" --unixsocketperm 700 \
		--dir "$d" --save '' --appendonly yes --appendfsync everysec --maxmemory-policy noeviction \
		--daemonize yes --pidfile "$d/redis.pid" --logfile "$d/redis.log" || return 1
	if ! _circuitgen_wait redis-cli -s "$d/redis.sock" ping; then
		echo "start_redis: redis-server did not start; log:" >&2
		cat "$d/redis.log" >&2
		return 1
	fi
	export CIRCUITGEN_REDIS_URL="unix://$d/redis.sock"
	echo "redis-server pid $(cat "$d/redis.pid") at $CIRCUITGEN_REDIS_URL"
}

# _circuitgen_free_port prints a TCP port on 127.0.0.1 that nothing listens
# on, nor on the port 10000 above it (a cluster's bus).
_circuitgen_free_port() {
	local p i
	for ((i = 0; i < 100; i++)); do
		p=$((20000 + RANDOM % 35000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && ! (exec 3<>"/dev/tcp/127.0.0.1/$((p + 10000))") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# start_redis_cluster starts three redis-servers with --cluster-enabled yes
# and joins them as three masters with no replicas.
start_redis_cluster() {
	local bin i p addrs=() d
	bin=$(command -v redis-server) || { echo "start_redis_cluster: redis-server not found" >&2; return 1; }
	_circuitgen_cluster_dir=$(mktemp -d "${TMPDIR:-/tmp}/circuitgen-cluster.XXXXXX") || return 1
	for i in 1 2 3; do
		d=$_circuitgen_cluster_dir/$i
		mkdir -p "$d"
		p=$(_circuitgen_free_port) || return 1
		"$bin" --bind 127.0.0.1 --port "$p" --cluster-enabled yes --cluster-config-file "$d/nodes.conf" \
			--cluster-node-timeout 2000 --dir "$d" --save '' --appendonly yes --appendfsync everysec --maxmemory-policy noeviction \
			--daemonize yes --pidfile "$d/redis.pid" --logfile "$d/redis.log" || return 1
		_circuitgen_wait redis-cli -p "$p" ping || { cat "$d/redis.log" >&2; return 1; }
		addrs+=("127.0.0.1:$p")
	done
	redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes >"$_circuitgen_cluster_dir/create.log" 2>&1 || {
		echo "start_redis_cluster: redis-cli --cluster create failed:" >&2
		cat "$_circuitgen_cluster_dir/create.log" >&2
		return 1
	}
	_circuitgen_wait bash -c "redis-cli -p ${p} cluster info | grep -q cluster_state:ok" || return 1
	CIRCUITGEN_REDIS_CLUSTER=$(
		IFS=,
		echo "${addrs[*]}"
	)
	export CIRCUITGEN_REDIS_CLUSTER
	echo "redis cluster at $CIRCUITGEN_REDIS_CLUSTER"
}

# start_redis_tls starts a redis-server that speaks only TLS, with a
# certificate for 127.0.0.1 and localhost signed by a CA made for it.
start_redis_tls() {
	local bin p d
	bin=$(command -v redis-server) || { echo "start_redis_tls: redis-server not found" >&2; return 1; }
	command -v openssl >/dev/null || { echo "start_redis_tls: openssl not found" >&2; return 1; }
	_circuitgen_tls_dir=$(mktemp -d "${TMPDIR:-/tmp}/circuitgen-tls.XXXXXX") || return 1
	d=$_circuitgen_tls_dir
	{
		openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=circuitgen-test-ca \
			-keyout "$d/ca.key" -out "$d/ca.crt" &&
			openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout "$d/server.key" -out "$d/server.csr" &&
			printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$d/san.ext" &&
			openssl x509 -req -in "$d/server.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
				-days 2 -extfile "$d/san.ext" -out "$d/server.crt"
	} >"$d/openssl.log" 2>&1 || { echo "start_redis_tls: openssl failed:" >&2; cat "$d/openssl.log" >&2; return 1; }
	chmod 600 "$d/server.key" "$d/ca.key"
	p=$(_circuitgen_free_port) || return 1
	"$bin" --bind 127.0.0.1 --port 0 --tls-port "$p" --tls-cert-file "$d/server.crt" --tls-key-file "$d/server.key" \
		--tls-ca-cert-file "$d/ca.crt" --tls-auth-clients no --dir "$d" --save '' --appendonly yes --appendfsync everysec --maxmemory-policy noeviction \
		--daemonize yes --pidfile "$d/redis.pid" --logfile "$d/redis.log" || return 1
	_circuitgen_wait redis-cli --tls --cacert "$d/ca.crt" -h 127.0.0.1 -p "$p" ping || { cat "$d/redis.log" >&2; return 1; }
	export CIRCUITGEN_REDIS_TLS_URL="rediss://127.0.0.1:$p" CIRCUITGEN_REDIS_TLS_CA="$d/ca.crt"
	echo "redis (TLS) pid $(cat "$d/redis.pid") at $CIRCUITGEN_REDIS_TLS_URL"
}

# _circuitgen_logged runs a command, its output in the log file $2; when it
# fails, it says $1 failed and shows the log.
_circuitgen_logged() {
	local what=$1 log=$2
	shift 2
	"$@" >"$log" 2>&1 && return 0
	echo "$what failed; log:" >&2
	cat "$log" >&2
	return 1
}

# _circuitgen_pg_start starts the server of $2/data with the settings
# "${@:3}" and waits for it; $1 names the caller in errors.
_circuitgen_pg_start() {
	local what=$1 d=$2
	shift 2
	# No TCP: listen_addresses is empty, the socket lives in $d.
	"${_circuitgen_pg_run[@]}" "$_circuitgen_pg_bindir/postgres" -D "$d/data" -k "$d" -c listen_addresses= -p 5432 \
		-c fsync=off -c full_page_writes=off -c max_connections="${CIRCUITGEN_PG_MAX_CONNECTIONS:-200}" "$@" \
		>"$d/postgres.log" 2>&1 &
	if ! _circuitgen_wait "${_circuitgen_pg_run[@]}" "$_circuitgen_pg_bindir/pg_isready" -q -h "$d" -p 5432; then
		echo "$what: postgres did not start; log:" >&2
		cat "$d/postgres.log" >&2
		return 1
	fi
}

start_postgres() {
	local bindir="" user run=() b
	for b in /usr/lib/postgresql/*/bin; do # the newest installed major version
		if [[ -x $b/initdb ]] && { [[ -z $bindir ]] || [[ ${b//[^0-9]/} -gt ${bindir//[^0-9]/} ]]; }; then
			bindir=$b
		fi
	done
	if [[ -z $bindir ]]; then
		echo "start_postgres: initdb not found (apt-get install -y postgresql)" >&2
		return 1
	fi
	user=$(id -un)
	if [[ $(id -u) == 0 ]]; then
		user=${CIRCUITGEN_PG_USER:-postgres}
		run=(runuser -u "$user" --)
	fi
	_circuitgen_pg_bindir=$bindir _circuitgen_pg_run=("${run[@]}")
	_circuitgen_pg_dir=$(mktemp -d "${TMPDIR:-/tmp}/circuitgen-pg.XXXXXX") || return 1
	local d=$_circuitgen_pg_dir
	if [[ ${#run[@]} -gt 0 ]]; then
		chown "$user" "$d" || return 1
	fi
	_circuitgen_logged "start_postgres: initdb" "$d/initdb.log" \
		"${run[@]}" "$bindir/initdb" -D "$d/data" -U "$user" --auth=trust --no-sync -E UTF8 || return 1
	_circuitgen_pg_start start_postgres "$d" -c synchronous_commit=off || return 1
	export CIRCUITGEN_POSTGRES_DSN="host=$d port=5432 user=$user dbname=postgres sslmode=disable"
	echo "postgres pid $(head -n 1 "$d/data/postmaster.pid") at $d"
}

# start_postgres_standby copies start_postgres's server (pg_basebackup -R)
# and starts the copy as a hot standby streaming from it, on a unix socket
# in a directory of its own.
start_postgres_standby() {
	local run=("${_circuitgen_pg_run[@]}") user d
	[[ -n $_circuitgen_pg_dir ]] || { echo "start_postgres_standby: run start_postgres first" >&2; return 1; }
	user=${CIRCUITGEN_POSTGRES_DSN#*user=}
	user=${user%% *}
	_circuitgen_standby_dir=$(mktemp -d "${TMPDIR:-/tmp}/circuitgen-pgs.XXXXXX") || return 1
	d=$_circuitgen_standby_dir
	if [[ ${#run[@]} -gt 0 ]]; then
		chown "$user" "$d" || return 1
	fi
	_circuitgen_logged "start_postgres_standby: pg_basebackup" "$d/basebackup.log" \
		"${run[@]}" "$_circuitgen_pg_bindir/pg_basebackup" -h "$_circuitgen_pg_dir" -p 5432 -U "$user" -D "$d/data" -R -X stream \
		-c fast --no-sync || return 1
	_circuitgen_pg_start start_postgres_standby "$d" -c hot_standby=on || return 1
	export CIRCUITGEN_POSTGRES_STANDBY_DSN="host=$d port=5432 user=$user dbname=postgres sslmode=disable"
	echo "postgres standby pid $(head -n 1 "$d/data/postmaster.pid") at $d"
}

# _circuitgen_stop_pid sends SIGTERM to pid $1 and waits up to 30s for it to exit.
_circuitgen_stop_pid() {
	local pid=$1 i
	[[ -n $pid ]] || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 300; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
}

stop_services() {
	local f
	if [[ -n $_circuitgen_cluster_dir ]]; then
		for f in "$_circuitgen_cluster_dir"/*/redis.pid; do
			_circuitgen_stop_pid "$(cat "$f" 2>/dev/null)"
		done
		rm -rf "$_circuitgen_cluster_dir"
		_circuitgen_cluster_dir=""
		unset CIRCUITGEN_REDIS_CLUSTER
	fi
	if [[ -n $_circuitgen_tls_dir ]]; then
		_circuitgen_stop_pid "$(cat "$_circuitgen_tls_dir/redis.pid" 2>/dev/null)"
		rm -rf "$_circuitgen_tls_dir"
		_circuitgen_tls_dir=""
		unset CIRCUITGEN_REDIS_TLS_URL CIRCUITGEN_REDIS_TLS_CA
	fi
	if [[ -n $_circuitgen_redis_dir ]]; then
		_circuitgen_stop_pid "$(cat "$_circuitgen_redis_dir/redis.pid" 2>/dev/null)"
		rm -rf "$_circuitgen_redis_dir"
		_circuitgen_redis_dir=""
		unset CIRCUITGEN_REDIS_URL
	fi
	if [[ -n $_circuitgen_standby_dir ]]; then
		_circuitgen_stop_pid "$(head -n 1 "$_circuitgen_standby_dir/data/postmaster.pid" 2>/dev/null)"
		rm -rf "$_circuitgen_standby_dir"
		_circuitgen_standby_dir=""
		unset CIRCUITGEN_POSTGRES_STANDBY_DSN
	fi
	if [[ -n $_circuitgen_pg_dir ]]; then
		_circuitgen_stop_pid "$(head -n 1 "$_circuitgen_pg_dir/data/postmaster.pid" 2>/dev/null)"
		rm -rf "$_circuitgen_pg_dir"
		_circuitgen_pg_dir=""
		unset CIRCUITGEN_POSTGRES_DSN
	fi
}
