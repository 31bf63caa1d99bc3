"""The attempt split between the filter workers and the queue, and its wire format: a worker's
walk and its answer (packed positions, shared answers, proposals), the answer decoded once where
it is read (`answers`), the queue's merge and batch decision, and preemption's side."""
