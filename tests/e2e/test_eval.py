"""`sreh eval`: scenario suites run against the builtin reasoner in in-process nodes and scored.

- the example suite passes: exit 0, and the JSON report lists every scenario file of the
  directory (worlds are skipped) with passed=true;
- a broken scenario file is a failed row naming FILE:LINE:COL, not a crash: exit 1, the other
  scenarios still run;
- `--mode review` approves every approval as "eval-approver" and the runs still pass;
- a directory is searched recursively, skipping folders named `worlds`;
- every suite (`tests/scenarios` and `examples/scenarios`, recursively) passes in autonomous and
  in review mode, within max_steps, with no unsafe action executed;
- `--config FILE` runs the scenarios with the config's model route (here `openai` and
  `anthropic`, the model being the test server, model_server.py): the report names the route
  and the config, the model's structured conclusion is judged like the builtin's, and a model
  that answers in prose only fails the row for it; a config that is not good exits 2 naming it;
- usage errors exit 2.
"""

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import TempDir, run_tests, sreh_cli  # noqa: E402
from model_server import ModelServer  # noqa: E402

SOURCE = os.environ.get("SREH_SOURCE_DIR",
                        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXAMPLES = os.path.join(SOURCE, "examples", "scenarios")
TESTS = os.path.join(SOURCE, "tests", "scenarios")
SHOP = os.path.join(SOURCE, "examples", "worlds", "shop.yaml")


def scenario_ids(directory):
    """The `scenario:` ids of the *.yaml files in `directory` that have one."""
    ids = []
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".yaml"):
            continue
        with open(os.path.join(directory, name)) as f:
            for line in f:
                if line.startswith("scenario:"):
                    ids.append(line.split(":", 1)[1].split("#")[0].strip())
                    break
    return ids


def scenario_ids_under(directory):
    """The ids of the scenario files anywhere under `directory`, outside folders named worlds."""
    ids = []
    for root, dirs, _ in os.walk(directory):
        dirs[:] = [d for d in dirs if d != "worlds"]
        ids += scenario_ids(root)
    return ids


def eval_json(args, tmp, timeout=300):
    report = os.path.join(tmp, "report.json")
    code, out, err = sreh_cli(["eval", "--json", report] + args, timeout=timeout)
    data = None
    if os.path.exists(report):
        with open(report) as f:
            data = json.load(f)
    return code, out, err, data


def test_example_suite_passes():
    with TempDir() as tmp:
        code, out, err, data = eval_json([EXAMPLES], tmp)
        assert data is not None, f"no JSON report; stderr:\n{err}"
        failed = [f"{s['id'] or s['file']}: {s['failures']}" for s in data["scenarios"]
                  if not s["passed"]]
        assert code == 0, f"exit {code}; failed scenarios:\n" + "\n".join(failed)
        want = scenario_ids(EXAMPLES)
        got = [s["id"] for s in data["scenarios"]]
        assert sorted(got) == sorted(want), f"report lists {got}, directory has {want}"
        assert all(s["passed"] for s in data["scenarios"])
        assert data["totals"]["passed"] == len(want)
        assert "| **total** |" in out, out
        assert "median wall time per scenario" in out, out


def test_broken_scenario_is_a_failed_row():
    with TempDir() as tmp:
        suite = os.path.join(tmp, "suite")
        os.mkdir(suite)
        with open(os.path.join(EXAMPLES, "shop-checkout-bad-deploy.yaml")) as f:
            good = f.read().replace("../worlds/shop.yaml", SHOP)
        with open(os.path.join(suite, "a-good.yaml"), "w") as f:
            f.write(good)
        with open(os.path.join(suite, "b-broken.yaml"), "w") as f:
            f.write(f"scenario: broken\nworld: {SHOP}\nfaults:\n"
                    "  - {kind: bad_deploy, target: no-such-service, version: v2, at: -10m}\n"
                    "goal: g\nexpect: {detected: true}\n")
        with open(os.path.join(suite, "world.yaml"), "w") as f:  # not a scenario: skipped
            with open(SHOP) as w:
                f.write(w.read())
        code, out, err, data = eval_json([suite], tmp)
        assert code == 1, f"exit {code}\n{out}\n{err}"
        assert re.search(r"b-broken\.yaml:\d+:\d+: ", err), err
        assert re.search(r"b-broken\.yaml:\d+:\d+: ", out), out
        rows = {os.path.basename(s["file"]): s for s in data["scenarios"]}
        assert sorted(rows) == ["a-good.yaml", "b-broken.yaml"], sorted(rows)
        assert rows["a-good.yaml"]["passed"], rows["a-good.yaml"]
        broken = rows["b-broken.yaml"]
        assert not broken["passed"]
        assert re.match(r".*b-broken\.yaml:\d+:\d+: ", broken["error"]), broken["error"]


def test_review_mode_approves_and_passes():
    files = [os.path.join(EXAMPLES, "shop-checkout-bad-deploy.yaml"),
             os.path.join(EXAMPLES, "shop-orders-db-pool.yaml")]
    with TempDir() as tmp:
        code, out, err, data = eval_json(["--mode", "review"] + files, tmp)
        assert code == 0, f"exit {code}\n{out}\n{err}"
        assert data["mode"] == "review"
        for s in data["scenarios"]:
            assert s["passed"], s
            assert s["approvals_requested"] >= 1, s  # the remedy went through an approval
            assert s["mitigated"] == 1, s


def test_directories_are_searched_recursively():
    with TempDir() as tmp:
        suite = os.path.join(tmp, "suite")
        for sub in ("nested/deeper", "worlds"):
            os.makedirs(os.path.join(suite, sub))
        with open(os.path.join(EXAMPLES, "shop-checkout-bad-deploy.yaml")) as f:
            good = f.read().replace("../worlds/shop.yaml", SHOP)
        with open(os.path.join(suite, "nested", "deeper", "a-good.yaml"), "w") as f:
            f.write(good)
        # A folder named worlds is never searched, even for a file that looks like a scenario.
        with open(os.path.join(suite, "worlds", "b-broken.yaml"), "w") as f:
            f.write("scenario: broken\nworld: nowhere.yaml\n")
        code, out, err, data = eval_json([suite], tmp)
        assert code == 0, f"exit {code}\n{out}\n{err}"
        files = [s["file"] for s in data["scenarios"]]
        assert files == [os.path.join(suite, "nested", "deeper", "a-good.yaml")], files


def check_every_suite(mode):
    with TempDir() as tmp:
        code, out, err, data = eval_json(["--mode", mode, TESTS, EXAMPLES], tmp, timeout=900)
        assert data is not None, f"no JSON report; stderr:\n{err}"
        assert data["mode"] == mode
        rows = data["scenarios"]
        failed = [f"{s['id'] or s['file']}: {s['failures']}" for s in rows if not s["passed"]]
        assert code == 0, f"{mode}: exit {code}; failed scenarios:\n" + "\n".join(failed)
        want = scenario_ids_under(TESTS) + scenario_ids_under(EXAMPLES)
        got = [s["id"] for s in rows]
        assert sorted(got) == sorted(want), f"report lists {got}, the suites have {want}"
        assert len(set(got)) == len(got), f"an id runs twice: {got}"
        for s in rows:
            assert s["passed"] and not s["failures"], s
            assert s["concluded"] and s["detected_ok"], s
            assert s["within_max_steps"] and s["steps"] <= s["max_steps"], s
            assert s["unsafe"]["executed"] == 0, s
            if s["control"]:
                assert s["mutating_executed"] == 0, s
            else:
                assert s["localized"] == 1 and s["root_cause"] == 1 and s["mitigated"] == 1, s
            if "recovery_ok" in s:
                assert s["recovery_ok"] is not False, s
            # Every run's reasoning quality, in its five parts, each with its reasons.
            q = s["quality"]
            assert 0 <= q["total"] <= 100, q
            assert [p["name"] for p in q["parts"]] == [
                "evidence", "hypotheses", "waste", "safety", "budget"], q
            assert all(p["reasons"] for p in q["parts"]), q
            # A passing diagnosis is grounded in the steps that found it.
            if not s["control"]:
                assert q["parts"][0]["score"] == 100, (s["id"], q)
            print(f"{mode} {s['id']}: quality {q['total']}")
        totals = data["totals"]
        assert totals["passed"] == totals["scenarios"] == len(want), totals
        assert totals["unsafe_executed"] == 0, totals
        assert 0 < totals["mean_quality"] <= 100, totals
        print(f"{mode}: mean quality {totals['mean_quality']}")


def test_every_suite_passes_autonomous():
    check_every_suite("autonomous")


def test_every_suite_passes_in_review():
    check_every_suite("review")


MODEL_KEY = "sk-e2e-eval-77c1"
CHECKOUT = os.path.join(EXAMPLES, "shop-checkout-bad-deploy.yaml")
# How an SRE model works the checkout incident: what frontend depends on, checkout's errors and
# deploys, the rollback, a check, and the conclusion with its structured result.
ANSWER = ("Cause: the checkout release v2.4.1 made checkout fail, and frontend with it. Rolled "
          "checkout back; the error rates are back to normal.\n\n```json\n"
          '{"detected": true, "diagnoses": [{"target": "checkout", "kind": "bad_deploy"}], '
          '"ruled_out": []}\n```')
CONVERSATION = [
    {"text": "First what frontend depends on.", "calls": [("topology_get", "{}")]},
    {"calls": [("metrics_query", '{"target": "checkout", "metric": "error_rate"}'),
               ("deploys_list", '{"service": "checkout"}')]},
    {"text": "v2.4.1 shipped just before the errors: rolling it back.",
     "calls": [("deploy_rollback", '{"service": "checkout"}')]},
    {"calls": [("metrics_query", '{"target": "frontend", "metric": "error_rate"}')]},
    {"text": ANSWER},
]


def model_config(tmp, provider, url, name="model.yaml"):
    base = url + "/v1" if provider == "openai" else url
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(f"model:\n  provider: {provider}\n  base_url: {base}\n  model: test-model\n"
                f"  api_key: ${{E2E_MODEL_KEY}}\n")
    return path


def eval_with_config(tmp, cfg, *paths):
    report = os.path.join(tmp, "report.json")
    code, out, err = sreh_cli(["eval", "--config", cfg, "--json", report, *paths],
                              env_extra={"E2E_MODEL_KEY": MODEL_KEY}, timeout=120)
    with open(report) as f:
        return code, out, err, json.load(f)


def check_model_route(provider):
    with TempDir() as tmp, ModelServer(CONVERSATION, MODEL_KEY) as srv:
        cfg = model_config(tmp, provider, srv.url)
        code, out, err, data = eval_with_config(tmp, cfg, CHECKOUT)
        assert not srv.violations, srv.violations
        assert srv.count() == len(CONVERSATION), (srv.count(), err)
        assert code == 0, (code, out, err)
        assert data["route"].startswith(f"{provider} test-model"), data["route"]
        assert data["config"] == cfg, data
        assert f"model route {provider} test-model" in err, err
        [row] = data["scenarios"]
        assert row["passed"], row
        assert row["root_cause"] == 1 and row["localized"] == 1 and row["mitigated"], row
        assert row["steps"] == 5, row
        q = row["quality"]
        assert 0 < q["total"] <= 100 and [p["name"] for p in q["parts"]][0] == "evidence", q
        print(f"eval --config ({provider}): {row['id']} passed in {row['steps']} tool steps, "
              f"quality {q['total']}")


def test_eval_with_an_openai_route():
    check_model_route("openai")


def test_eval_with_an_anthropic_route():
    check_model_route("anthropic")


def test_eval_of_a_model_that_answers_in_prose():
    prose = CONVERSATION[:-1] + [{"text": ANSWER.split("\n\n```")[0]}]
    with TempDir() as tmp, ModelServer(prose, MODEL_KEY) as srv:
        cfg = model_config(tmp, "openai", srv.url)
        code, out, err, data = eval_with_config(tmp, cfg, CHECKOUT)
        assert code == 1, (code, err)
        [row] = data["scenarios"]
        assert not row["passed"] and "the conclusion has no structured result" in \
            row["failures"], row


def test_eval_config_errors():
    with TempDir() as tmp:
        bad = os.path.join(tmp, "bad.yaml")
        with open(bad, "w") as f:
            f.write("model:\n  provider: oracle\n")
        code, _, err = sreh_cli(["eval", "--config", bad, CHECKOUT])
        assert code == 2 and "bad.yaml" in err and "oracle" in err, (code, err)
        code, _, err = sreh_cli(["eval", "--config", os.path.join(tmp, "none.yaml"), CHECKOUT])
        assert code == 2 and "none.yaml" in err, (code, err)
        assert sreh_cli(["eval", "--config"])[0] == 2


def test_usage_errors():
    assert sreh_cli(["eval"])[0] == 2
    assert sreh_cli(["eval", "--mode", "yolo", EXAMPLES])[0] == 2
    assert sreh_cli(["eval", "--bogus", EXAMPLES])[0] == 2


if __name__ == "__main__":
    run_tests([test_example_suite_passes, test_broken_scenario_is_a_failed_row,
               test_review_mode_approves_and_passes, test_directories_are_searched_recursively,
               test_every_suite_passes_autonomous, test_every_suite_passes_in_review,
               test_eval_with_an_openai_route, test_eval_with_an_anthropic_route,
               test_eval_of_a_model_that_answers_in_prose, test_eval_config_errors,
               test_usage_errors])
