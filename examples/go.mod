module github.com/circuitgen/circuitgen/examples

go 1.26.0

tool github.com/circuitgen/circuitgen/cmd/circuitgen

require (
	github.com/circuitgen/circuitgen v0.1.0
	github.com/redis/go-redis/v9 v9.23.0
	google.golang.org/grpc v1.85.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/circuitgen/circuitgen/cmd/circuitgen v0.1.0 // indirect
	github.com/circuitgen/circuitgen/generator v0.1.0 // indirect
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/gofrs/flock v0.13.2 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace (
	github.com/circuitgen/circuitgen => ..
	github.com/circuitgen/circuitgen/cmd/circuitgen => ../cmd/circuitgen
	github.com/circuitgen/circuitgen/generator => ../generator
)
