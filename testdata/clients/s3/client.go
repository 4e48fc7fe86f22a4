// Package s3 guards five methods of the AWS SDK's S3 client, a struct
// client, by the statuses its errors carry.
package s3

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

//go:generate go tool circuitgen

// Client is the part of *s3.Client this package calls.
//
//circuitgen:guard circuit=s3 threshold=5 cooldown=30s errors=*net/url.Error,context.DeadlineExceeded statuses=500-599,429
type Client interface {
	GetObject(ctx context.Context, params *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	PutObject(ctx context.Context, params *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	HeadObject(ctx context.Context, params *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	DeleteObject(ctx context.Context, params *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
	ListObjectsV2(ctx context.Context, params *s3.ListObjectsV2Input, optFns ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
}

var _ Client = (*s3.Client)(nil)
