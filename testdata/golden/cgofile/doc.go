package cgofile
