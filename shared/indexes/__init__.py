"""Indexes over the snapshot's nodes that make a walk cheap without changing its answer: per pod
signature, each node's node-local Filter verdict and raw scores in arrays (`node_index`); node
statuses as arrays of positions (`rejections`); where nominated pods sit (`nominated_positions`)."""
