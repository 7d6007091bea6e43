"""Work templates on a real node: `works.templates` names a folder, the node loads and checks
every template at start, GET /v1/templates and /v1/templates/{name} show them, `sreh
templates` lists them, `sreh config check` checks a template file, and a broken template stops
the node at start with FILE:LINE:COL."""

import os
import shutil

from harness import Node, TempDir, run_tests, sreh_cli
from cluster_harness import SOURCE

EXAMPLES = os.path.join(SOURCE, "examples", "templates")


def templates_dir(d):
    out = os.path.join(d, "templates")
    shutil.copytree(EXAMPLES, out)
    return out


def test_the_node_serves_its_templates():
    with TempDir() as d:
        node = Node(d, config_extra=f"works:\n  templates: {templates_dir(d)}\n").start()
        status, _, doc = node.json("GET", "/v1/templates")
        assert status == 200, doc
        names = [t["name"] for t in doc["templates"]]
        assert names == ["incident"], names
        status, _, doc = node.json("GET", "/v1/templates/incident")
        assert status == 200, doc
        t = doc["template"]
        assert t["kind"] == "incident" and t["double_texting"] == "join", t
        fields = {f["name"]: f for f in t["fields"]}
        assert set(fields) == {"service", "alert", "summary", "severity"}, fields
        assert fields["service"]["required"] and fields["alert"]["default"] == "manual"
        assert fields["severity"]["values"] == ["sev1", "sev2", "sev3", "sev4"]
        assert t["sla"] == {"acknowledge_ms": 900000, "mitigate_ms": 3600000,
                            "resolve_ms": 14400000}, t["sla"]
        assert t["done"] == {"condition": "{service}.error_rate < 0.01", "for_s": 60}, t["done"]
        assert len(t["version"]) == 16
        status, _, doc = node.json("GET", "/v1/templates/outage")
        assert status == 404 and "this node has: incident" in doc["detail"], doc
        code, out, err = sreh_cli(["templates", "--server", f"127.0.0.1:{node.port}"])
        assert code == 0, err
        assert "incident" in out and "service*" in out and "severity(sev1|sev2|sev3|sev4)" in out, out
        node.stop()


def test_a_broken_template_stops_the_node_naming_the_place():
    with TempDir() as d:
        tdir = templates_dir(d)
        path = os.path.join(tdir, "incident.yaml")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace("double_texting: join", "double_texting: later"))
        out = Node(d, config_extra=f"works:\n  templates: {tdir}\n").start_fails()
        assert "sreh exited with 1" in out, out
        assert f"{path}:" in out and "double_texting: expected one of enqueue, join, " \
            "interrupt, reject, got 'later'" in out, out
        code, out, err = sreh_cli(["config", "check", path])
        assert code == 1 and f"{path}:" in err and "got 'later'" in err, (code, out, err)


def test_a_change_without_its_rollback_plan_is_refused():
    """The SRE work extension's `change` kind asks every template for a rollback field."""
    with TempDir() as d:
        tdir = os.path.join(d, "templates")
        os.makedirs(tdir)
        path = os.path.join(tdir, "change.yaml")
        with open(path, "w") as f:
            f.write("template: change\nkind: change\nfields: {target: {type: string}}\n"
                    "run: {goal: \"change {target}\"}\n")
        out = Node(d, config_extra=f"works:\n  templates: {tdir}\n").start_fails()
        assert f"{path}:2:7: kind: a template of kind change needs a field 'rollback' of " \
            "type string" in out, out
        code, out, err = sreh_cli(["config", "check", path])
        assert code == 1 and "needs a field 'rollback'" in err, (code, out, err)


def test_config_check_takes_a_template():
    code, out, err = sreh_cli(["config", "check", os.path.join(EXAMPLES, "incident.yaml")])
    assert code == 0, err
    assert "Work template 'incident', kind incident, 4 fields" in out, out


if __name__ == "__main__":
    run_tests([
        test_the_node_serves_its_templates,
        test_a_broken_template_stops_the_node_naming_the_place,
        test_a_change_without_its_rollback_plan_is_refused,
        test_config_check_takes_a_template,
    ])
