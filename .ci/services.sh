# shellcheck shell=bash
# .ci/services.sh: private Redis and PostgreSQL instances for the integration
# tests of runtime/redisstore and runtime/sqlstore. Source it, then:
#
#	start_redis     # exports CIRCUITGEN_REDIS_URL (unix socket)
#	start_postgres  # exports CIRCUITGEN_POSTGRES_DSN (unix socket)
#	stop_services   # stops both by pid and removes their directories
#
# Each instance lives in its own temporary directory, listens only on a unix
# socket there (no TCP port to collide with), persists nothing and is stopped
# by its pid. PostgreSQL refuses to run as root, so as root it runs as the
# "postgres" user (Debian's postgresql package creates it) or $CIRCUITGEN_PG_USER.

_circuitgen_redis_dir=""
_circuitgen_pg_dir=""

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
		--dir "$d" --save '' --appendonly no \
		--daemonize yes --pidfile "$d/redis.pid" --logfile "$d/redis.log" || return 1
	if ! _circuitgen_wait redis-cli -s "$d/redis.sock" ping; then
		echo "start_redis: redis-server did not start; log:" >&2
		cat "$d/redis.log" >&2
		return 1
	fi
	export CIRCUITGEN_REDIS_URL="unix://$d/redis.sock"
	echo "redis-server pid $(cat "$d/redis.pid") at $CIRCUITGEN_REDIS_URL"
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
	_circuitgen_pg_dir=$(mktemp -d "${TMPDIR:-/tmp}/circuitgen-pg.XXXXXX") || return 1
	local d=$_circuitgen_pg_dir
	if [[ ${#run[@]} -gt 0 ]]; then
		chown "$user" "$d" || return 1
	fi
	"${run[@]}" "$bindir/initdb" -D "$d/data" -U "$user" --auth=trust --no-sync -E UTF8 >"$d/initdb.log" 2>&1 || {
		echo "start_postgres: initdb failed; log:" >&2
		cat "$d/initdb.log" >&2
		return 1
	}
	# No TCP: listen_addresses is empty, the socket lives in $d.
	"${run[@]}" "$bindir/postgres" -D "$d/data" -k "$d" -c listen_addresses= -p 5432 \
		-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 \
		>"$d/postgres.log" 2>&1 &
	if ! _circuitgen_wait "${run[@]}" "$bindir/pg_isready" -q -h "$d" -p 5432; then
		echo "start_postgres: postgres did not start; log:" >&2
		cat "$d/postgres.log" >&2
		return 1
	fi
	export CIRCUITGEN_POSTGRES_DSN="host=$d port=5432 user=$user dbname=postgres sslmode=disable"
	echo "postgres pid $(head -n 1 "$d/data/postmaster.pid") at $d"
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
	if [[ -n $_circuitgen_redis_dir ]]; then
		_circuitgen_stop_pid "$(cat "$_circuitgen_redis_dir/redis.pid" 2>/dev/null)"
		rm -rf "$_circuitgen_redis_dir"
		_circuitgen_redis_dir=""
		unset CIRCUITGEN_REDIS_URL
	fi
	if [[ -n $_circuitgen_pg_dir ]]; then
		_circuitgen_stop_pid "$(head -n 1 "$_circuitgen_pg_dir/data/postmaster.pid" 2>/dev/null)"
		rm -rf "$_circuitgen_pg_dir"
		_circuitgen_pg_dir=""
		unset CIRCUITGEN_POSTGRES_DSN
	fi
}
