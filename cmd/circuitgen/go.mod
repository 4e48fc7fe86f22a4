module github.com/circuitgen/circuitgen/cmd/circuitgen

go 1.26.0

require github.com/circuitgen/circuitgen/generator v0.1.0

require (
	github.com/circuitgen/circuitgen v0.1.0 // indirect
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/kr/text v0.2.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
