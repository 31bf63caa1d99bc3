"""The gateway: Kubernetes-flavoured REST in front of Berth. Writes become events; reads come from Postgres."""
