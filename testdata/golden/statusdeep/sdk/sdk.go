// Package sdk is an SDK client, as the AWS SDK's service/s3: its errors
// come from a package it imports, which its exported API does not name.
package sdk

import "github.com/circuitgen/circuitgen/testdata/golden/statusdeep/sdk/transport"

// GetInput is a request.
type GetInput struct{ Key string }

// GetOutput is a response.
type GetOutput struct{ Body []byte }

// Client is the SDK's client.
type Client struct{}

// Get fails as its transport does.
func (c *Client) Get(in *GetInput) (*GetOutput, error) { return nil, transport.Send() }
