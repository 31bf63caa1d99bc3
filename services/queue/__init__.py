"""The queue service: owns the scheduling queue and drives each scheduling cycle."""
