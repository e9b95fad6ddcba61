"""What a bundle (kubectl dra dump) keeps of an object: no secrets, but what the analysis reads."""

from __future__ import annotations

from kubectl_dra.gather.bundle import scrub


def test_environment_values_go_but_a_drivers_name_stays():
    ds = {
        "kind": "DaemonSet",
        "metadata": {"name": "p", "managedFields": [{"manager": "helm"}]},
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "plugin",
                            "env": [
                                {"name": "DRIVER_NAME", "value": "gpu.example.com"},
                                {"name": "API_TOKEN", "value": "s3cret"},
                                {"name": "FROM", "valueFrom": {"secretKeyRef": {"name": "x", "key": "y"}}},
                            ],
                            "envFrom": [{"secretRef": {"name": "x"}}],
                        }
                    ]
                }
            }
        },
    }
    out = scrub(ds)
    c = out["spec"]["template"]["spec"]["containers"][0]
    assert c["env"] == [{"name": "DRIVER_NAME", "value": "gpu.example.com"}, {"name": "API_TOKEN"}, {"name": "FROM"}]
    assert "envFrom" not in c and "managedFields" not in out["metadata"]
    assert "s3cret" not in repr(out)


def test_a_slice_keeps_the_names_of_its_field_managers_only():
    s = {
        "kind": "ResourceSlice",
        "metadata": {"name": "s", "managedFields": [{"manager": "gpu-kubelet-plugin", "fieldsV1": {"f:spec": {}}}]},
    }
    assert scrub(s)["metadata"]["managedFields"] == [{"manager": "gpu-kubelet-plugin"}]


def test_scrub_leaves_the_object_read_as_it_was():
    pod = {
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "managedFields": [{"manager": "kubectl"}],
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "keep": "me"},
        },
        "spec": {"containers": [{"name": "c", "env": [{"name": "TOKEN", "value": "s3cret"}], "envFrom": [{}]}]},
    }
    before = repr(pod)
    out = scrub(pod)
    assert repr(pod) == before  # the snapshot's object is not changed by what the bundle leaves out
    assert out["metadata"]["annotations"] == {"keep": "me"} and "managedFields" not in out["metadata"]
    assert out["spec"]["containers"] == [{"name": "c", "env": [{"name": "TOKEN"}]}]
