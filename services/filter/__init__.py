"""The filter service: N replicas share the node shards through a consumer group."""
