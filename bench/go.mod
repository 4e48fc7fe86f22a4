module github.com/circuitgen/circuitgen/bench

go 1.26.0

tool github.com/circuitgen/circuitgen/cmd/circuitgen

require (
	github.com/afex/hystrix-go v0.0.0-20180502004556-fa1af6a1f4f5
	github.com/cenk/backoff v2.2.1+incompatible
	github.com/circuitgen/circuitgen v0.1.0
	github.com/circuitgen/circuitgen/runtime/redisstore v0.1.0
	github.com/circuitgen/circuitgen/runtime/sqlstore v0.1.0
	github.com/eapache/go-resiliency v1.7.0
	github.com/failsafe-go/failsafe-go v0.9.8
	github.com/gofrs/flock v0.13.2
	github.com/jackc/pgx/v5 v5.12.0
	github.com/mercari/go-circuitbreaker v0.0.2
	github.com/redis/go-redis/v9 v9.23.0
	github.com/rubyist/circuitbreaker v2.2.1+incompatible
	github.com/sony/gobreaker/v2 v2.4.0
	go.opentelemetry.io/otel/sdk/metric v1.47.0
)

require (
	github.com/benbjohnson/clock v1.3.0 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cenkalti/backoff/v3 v3.1.1 // indirect
	github.com/facebookgo/clock v0.0.0-20150410010913-600d898af40a // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/peterbourgon/g2s v0.0.0-20170223122336-d4e7ad98afea // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/smartystreets/goconvey v1.8.1 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/sdk v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

require (
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/circuitgen/circuitgen/cmd/circuitgen v0.1.0 // indirect
	github.com/circuitgen/circuitgen/generator v0.1.0 // indirect
	github.com/circuitgen/circuitgen/runtime/otelcircuit v0.1.0
	github.com/circuitgen/circuitgen/runtime/prommetrics v0.1.0
	github.com/dave/jennifer v1.7.1 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	google.golang.org/grpc v1.85.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace (
	github.com/circuitgen/circuitgen => ..
	github.com/circuitgen/circuitgen/cmd/circuitgen => ../cmd/circuitgen
	github.com/circuitgen/circuitgen/generator => ../generator
	github.com/circuitgen/circuitgen/runtime/redisstore => ../runtime/redisstore
	github.com/circuitgen/circuitgen/runtime/sqlstore => ../runtime/sqlstore
)

replace github.com/circuitgen/circuitgen/runtime/otelcircuit => ../runtime/otelcircuit

replace github.com/circuitgen/circuitgen/runtime/prommetrics => ../runtime/prommetrics
