"""krc: the KubeRay config compiler."""
