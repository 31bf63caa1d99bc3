"""The preemption service: upstream DefaultPreemption over the whole cluster view."""
