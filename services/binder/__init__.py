"""The binder: the single writer per node, re-checking fit before it commits a pod (PodBound / BindRejected)."""
