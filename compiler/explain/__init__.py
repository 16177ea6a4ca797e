"""What krc tells about a project without rendering it anew: where a value comes from, what an unset key means,
and the facts of `krc envs`, `krc show` and `krc --version`."""
