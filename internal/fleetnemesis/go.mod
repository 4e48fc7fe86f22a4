module github.com/circuitgen/circuitgen/internal/fleetnemesis

go 1.26.0

replace (
	github.com/circuitgen/circuitgen => ../..
	github.com/circuitgen/circuitgen/runtime/redisstore => ../../runtime/redisstore
	github.com/circuitgen/circuitgen/runtime/sqlstore => ../../runtime/sqlstore
)

require (
	github.com/circuitgen/circuitgen v0.1.0
	github.com/circuitgen/circuitgen/runtime/redisstore v0.1.0
	github.com/circuitgen/circuitgen/runtime/sqlstore v0.1.0
	github.com/jackc/pgx/v5 v5.12.0
	github.com/redis/go-redis/v9 v9.23.0
	golang.org/x/sys v0.49.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
