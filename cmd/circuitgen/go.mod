module github.com/circuitgen/circuitgen/cmd/circuitgen

go 1.26.0

require github.com/circuitgen/circuitgen/generator v0.0.0-00010101000000-000000000000

require (
	github.com/circuitgen/circuitgen v0.0.0-00010101000000-000000000000 // indirect
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/kr/text v0.2.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace (
	github.com/circuitgen/circuitgen => ../..
	github.com/circuitgen/circuitgen/generator => ../../generator
)
