package redisstore

// ReplaceWithWriteID is Replace with a chosen write id, for replay tests.
var ReplaceWithWriteID = (*Store).replace
