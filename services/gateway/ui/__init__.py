"""The web view the gateway serves at /ui/: an overview of nodes and pods that updates itself, a pod
(its events and the explain table of its attempts), and a node (what its pods take)."""
