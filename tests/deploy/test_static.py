"""The deployment files, checked statically (Docker cannot run here): linters, schemas, and agreement."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).parent.parent.parent
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yaml").read_text())
COLLECTORS = [
    ROOT / "otel-collector.yaml",
    ROOT / "collector" / "loadbalancing.yaml",
    ROOT / "collector" / "scale.yaml",
]
CONTRIB_VERSION = "0.159.0"
DISTROLESS = ("otel-collector", "jaeger", "scale-collector")
"""Images without a shell or curl: no health check of their own."""
# The components of otelcol-contrib 0.159.0 these configurations may name (from the release's
# distributions/otelcol-contrib/manifest.yaml; canonical names, not the deprecated otlp/otlphttp/loadbalancing aliases)
CONTRIB_0_159 = {
    "receivers": {"otlp"},
    "processors": {"batch", "memory_limiter"},
    "exporters": {"otlp_grpc", "otlp_http", "load_balancing", "debug", "clickhouse"},
    "extensions": {"health_check"},
}


def _bin(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    assert found is not None, f"{name} is a dev dependency"
    return found


def test_hadolint_passes_on_both_dockerfiles() -> None:
    result = subprocess.run([_bin("hadolint"), "Dockerfile.green", "Dockerfile.purple"], cwd=ROOT,
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


_YAML = ("*.yaml", "*.yml", "collector/*.yaml", ".github/workflows/*.yml", ".yamllint.yaml")


def test_yamllint_passes_on_every_yaml_file() -> None:
    files = sorted(
        str(p.relative_to(ROOT))
        for pattern in (*_YAML, "dashboards/**/*.yml", "dashboards/**/*.yaml")
        for p in ROOT.glob(pattern)
    )
    assert "docker-compose.yaml" in files and ".github/workflows/ci.yml" in files
    assert "dashboards/prometheus/alerts.yml" in files
    result = subprocess.run([_bin("yamllint"), "-c", ".yamllint.yaml", "--strict", *files], cwd=ROOT,
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert result.returncode == 0, result.stdout


def test_the_compose_file_follows_the_compose_specification() -> None:
    schema = json.loads((ROOT / "tests" / "schemas" / "compose-spec.json").read_text())
    jsonschema.Draft7Validator(schema).validate(COMPOSE)
    broken = {**COMPOSE, "services": {"x": {"image": 3}}}
    with pytest.raises(jsonschema.ValidationError):  # the schema does catch a mistake
        jsonschema.Draft7Validator(schema).validate(broken)


def test_compose_health_checks_ordering_and_no_host_paths_but_output() -> None:
    services: dict[str, Any] = COMPOSE["services"]
    one_shot = {name for name, s in services.items() if s.get("restart") == "no"}
    assert one_shot == {"assess"}
    for name, service in services.items():
        if name not in one_shot and name not in DISTROLESS:
            assert "healthcheck" in service, f"{name} has no health check"
        for dependency, condition in (service.get("depends_on") or {}).items():
            assert dependency in services
            if dependency not in DISTROLESS:  # no shell: probed by telemetry-health
                assert condition["condition"] == "service_healthy", (name, dependency)
        for volume in service.get("volumes") or []:
            assert volume.split(":")[0] == "./output", f"{name} mounts {volume}"
    assert {"otel-collector:13133", "jaeger:16686"} <= set(
        re.findall(r"//([a-z-]+:\d+)", " ".join(services["telemetry-health"]["healthcheck"]["test"]))
    )
    assert services["otel-collector"]["image"].endswith(f":{CONTRIB_VERSION}")


@pytest.mark.parametrize("path", COLLECTORS, ids=lambda p: p.name)
def test_collector_configurations_are_consistent(path: Path) -> None:
    config = yaml.safe_load(path.read_text())
    service = config["service"]
    for extension in service.get("extensions", []):
        assert extension in config["extensions"], extension
    for kind in ("receivers", "processors", "exporters", "extensions"):
        for name in config.get(kind) or {}:
            assert name.split("/")[0] in CONTRIB_0_159[kind], f"{path.name}: {kind} {name} is not in contrib 0.159"
    for pipeline, parts in service["pipelines"].items():
        assert pipeline.split("/")[0] == "traces"
        for kind in ("receivers", "processors", "exporters"):
            for name in parts.get(kind, []):
                assert name in (config.get(kind) or {}), f"{path.name}: pipeline {pipeline} names undefined {name}"
    if "memory_limiter" in (config.get("processors") or {}):  # first, before batching, in every pipeline
        for pipeline, parts in service["pipelines"].items():
            assert parts["processors"][0] == "memory_limiter", f"{path.name}: {pipeline}"


def test_the_default_collector_fans_out_to_the_green_and_jaeger_with_retries() -> None:
    config = yaml.safe_load((ROOT / "otel-collector.yaml").read_text())
    exporters = config["exporters"]
    green, jaeger = exporters["otlp_http/coordbench"], exporters["otlp_grpc/jaeger"]
    for exporter in (green, jaeger):
        assert exporter["retry_on_failure"]["enabled"] and exporter["sending_queue"]["enabled"]
    assert config["service"]["pipelines"]["traces"]["processors"] == ["memory_limiter", "batch"]
    assert config["receivers"]["otlp"]["protocols"] == {"grpc": {"endpoint": "0.0.0.0:4317"},
                                                        "http": {"endpoint": "0.0.0.0:4318"}}  # fmt: skip
    balancing = yaml.safe_load((ROOT / "collector" / "loadbalancing.yaml").read_text())["exporters"]["load_balancing"]
    assert balancing["routing_key"] == "traceID"


def _dockerfile(name: str) -> dict[str, Any]:
    text = (ROOT / name).read_text()
    env: dict[str, str] = {}
    for block in re.findall(r"^ENV (.+?)(?<!\\)$", text, re.M | re.S):
        env.update(dict(re.findall(r'([A-Z_]+)=("[^"]*"|\S+)', block.replace("\\\n", " "))))
    return {
        "entrypoint": json.loads(re.search(r"^ENTRYPOINT (.+)$", text, re.M).group(1)),  # type: ignore[union-attr]
        "expose": re.findall(r"^EXPOSE (\d+)", text, re.M),
        "env": {k: v.strip('"') for k, v in env.items()},
        "healthcheck": re.search(r'CMD \["curl", "-fsS", "([^"]+)"\]', text).group(1),  # type: ignore[union-attr]
        "text": text,
    }


def test_ports_urls_and_variables_agree_across_files() -> None:
    from coordbench.green.server import GreenSettings
    from coordbench.purple.server import PurpleSettings

    services: dict[str, Any] = COMPOSE["services"]
    green, purple = _dockerfile("Dockerfile.green"), _dockerfile("Dockerfile.purple")
    assert green["expose"] == purple["expose"] == ["9009"]
    assert green["entrypoint"] == ["coordbench", "green"] and purple["entrypoint"] == ["coordbench", "purple"]
    assert green["healthcheck"] == "http://127.0.0.1:9009/healthz"
    assert purple["healthcheck"] == "http://127.0.0.1:9009/.well-known/agent-card.json"
    assert "COORDBENCH_OUTPUT_DIR" in green["env"] and "output_dir" in GreenSettings.model_fields
    # every agent service listens on 9009 and advertises its own service name
    for name, service in services.items():
        command = service.get("command") or []
        if "--card-url" in command:
            assert command[command.index("--port") + 1] == "9009", name
            assert command[command.index("--card-url") + 1] == f"http://{name}:9009/", name
    # purple services: their role is a member of the shape they name, and the variables are what the CLI reads
    from coordbench.purple import team_for_shape

    read = {f"{PurpleSettings.model_config.get('env_prefix')}{name.upper()}" for name in PurpleSettings.model_fields}
    assert {"PURPLE_ROLE", "PURPLE_SHAPE", "PURPLE_TEAM", "PURPLE_SIZE"} <= read  # the one reader of PURPLE_*
    assert {"host", "port", "card_url", "registry", "pace"} <= set(PurpleSettings.model_fields)
    members = {m.name for m in team_for_shape("star").members}
    purple_services = [n for n, s in services.items() if s.get("image") == "coordbench-purple:local"]
    assert sorted(purple_services) == sorted(members)
    for name in purple_services:
        env = services[name]["environment"]
        assert env["PURPLE_ROLE"] == name and env["PURPLE_SHAPE"] == "star"
        assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://otel-collector:4318"
    # the one-shot client assesses exactly the purple services, through the green
    assess = services["assess"]["command"]
    assert assess[assess.index("--green") + 1] == "http://green:9009/"
    given = {v.split("=")[0]: v.split("=")[1] for v in assess[1:] if "=" in v}
    assert given == {n: f"http://{n}:9009/" for n in purple_services}
    # the collector sends to the green service and to Jaeger, on the ports they serve
    collector = yaml.safe_load((ROOT / "otel-collector.yaml").read_text())
    assert collector["exporters"]["otlp_http/coordbench"]["endpoint"] == "http://green:9009"
    assert collector["exporters"]["otlp_grpc/jaeger"]["endpoint"] == "jaeger:4317"
    assert collector["extensions"]["health_check"]["endpoint"].endswith(":13133")
    # the AgentBeats scenario: participants are the same members; their spans go to the green's service name
    scenario = tomllib.loads((ROOT / "scenario.toml").read_text())
    assert sorted(p["name"] for p in scenario["participants"]) == sorted(members)
    for participant in scenario["participants"]:
        assert participant["env"]["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://green-agent:9009"
        assert participant["env"]["PURPLE_ROLE"] == participant["name"]
    # the rotel settings the demo reads name only variables rotel-agent knows (see collector/rotel.env)
    rotel = [line.split("=")[0] for line in (ROOT / "collector" / "rotel.env").read_text().splitlines()
             if line and not line.startswith("#")]  # fmt: skip
    assert rotel and all(v.startswith("ROTEL_") for v in rotel)


def test_workflows_parse_and_name_files_and_targets_that_exist() -> None:
    targets = set(re.findall(r"^([a-z][a-z-]*):", (ROOT / "Makefile").read_text(), re.M))
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert {w.name for w in workflows} >= {"ci.yml", "images.yml", "scenario.yml"}
    for workflow in workflows:
        document = yaml.safe_load(workflow.read_text())
        assert document["jobs"], workflow.name
        text = workflow.read_text()
        for target in re.findall(r"\bmake ([a-z-]+)", text):
            assert target in targets, (workflow.name, target)
        for path in re.findall(r"((?:scripts|collector)/[\w/.-]+|Dockerfile\.\w+|scenario\.toml)", text):
            assert (ROOT / path).exists(), (workflow.name, path)
        if "Dockerfile.${{ matrix.agent }}" in text:
            for agent in document["jobs"]["publish"]["strategy"]["matrix"]["agent"]:
                assert (ROOT / f"Dockerfile.{agent}").exists()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci


def test_the_observability_profile_wires_prometheus_and_grafana_to_the_dashboards() -> None:
    from coordbench.dashboards import grafana as dashboard

    services: dict[str, Any] = COMPOSE["services"]
    configs: dict[str, Any] = COMPOSE["configs"]
    profiled = {name for name, s in services.items() if s.get("profiles") == ["observability"]}
    assert profiled == {"prometheus", "grafana"}
    # every config file exists and is one `make dashboards` writes
    built = {f"./dashboards/{relative}" for relative in dashboard.files()}
    for service in profiled:
        for entry in services[service]["configs"]:
            path = configs[entry["source"]]["file"]
            assert path in built, path
            assert (ROOT / path).exists()
    targets = {e["target"] for e in services["prometheus"]["configs"]}
    prometheus = yaml.safe_load((ROOT / "dashboards" / "prometheus" / "prometheus.yml").read_text())
    assert set(prometheus["rule_files"]) <= targets
    scrape = prometheus["scrape_configs"][0]
    assert scrape["metrics_path"] == "/metrics" and scrape["static_configs"][0]["targets"] == ["green:9009"]
    assert services["green"]["environment"]["COORDBENCH_EVALUATE"] == "${COORDBENCH_EVALUATE:-true}"
    # Grafana: its data sources are the compose services on the ports they serve; the dashboard is where the
    # provider looks, and the panels use the provisioned Prometheus
    sources = yaml.safe_load((ROOT / "dashboards/grafana/provisioning/datasources/coordbench.yaml").read_text())
    urls = {s["type"]: s["url"] for s in sources["datasources"]}
    assert urls == {"prometheus": "http://prometheus:9090", "jaeger": "http://jaeger:16686"}
    assert services["prometheus"]["ports"] == ["9090:9090"] and "jaeger" in services
    providers = yaml.safe_load((ROOT / "dashboards/grafana/provisioning/dashboards/coordbench.yaml").read_text())
    folder = providers["providers"][0]["options"]["path"]
    grafana_targets = {e["target"] for e in services["grafana"]["configs"]}
    assert f"{folder}/coordination.json" in grafana_targets
    assert services["grafana"]["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"] in grafana_targets
    board = json.loads((ROOT / "dashboards/grafana/dashboards/coordination.json").read_text())
    uids = {s["uid"] for s in sources["datasources"]}
    for panel in board["panels"]:
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] in uids and panel["targets"], panel["title"]


def test_the_scale_profile_agrees_with_its_collector_prometheus_and_grafana() -> None:
    from coordbench.clickhouse import parse_store_url
    from coordbench.dashboards import grafana as dashboard
    from coordbench.dashboards.clickhouse import CLICKHOUSE_UID

    services: dict[str, Any] = COMPOSE["services"]
    configs: dict[str, Any] = COMPOSE["configs"]
    scale = {name for name, s in services.items() if s.get("profiles") == ["scale"]}
    assert scale == {"clickhouse", "receiver-1", "receiver-2", "scale-collector", "prometheus-scale", "grafana-scale"}
    clickhouse = services["clickhouse"]
    collector = yaml.safe_load((ROOT / "collector" / "scale.yaml").read_text())
    exporter = collector["exporters"]["clickhouse"]
    database, user = clickhouse["environment"]["CLICKHOUSE_DB"], clickhouse["environment"]["CLICKHOUSE_USER"]
    password = clickhouse["environment"]["CLICKHOUSE_PASSWORD"]
    assert password == "${CLICKHOUSE_PASSWORD:-coordbench}"
    # the exporter writes the tables coordbench reads: same server, database, user and password variable
    assert exporter["endpoint"].startswith("tcp://clickhouse:9000") and exporter["database"] == database
    assert exporter["username"] == user and exporter["password"] == "${env:CLICKHOUSE_PASSWORD}"
    assert exporter["traces_table_name"] == "otel_traces" and exporter["create_schema"] is True
    assert services["scale-collector"]["environment"]["CLICKHOUSE_PASSWORD"] == password
    assert services["scale-collector"]["image"].endswith(f":{CONTRIB_VERSION}")
    # every trace, whole, to one receiver: the load balancer's hostnames are the receivers' gRPC ports
    balancing = collector["exporters"]["load_balancing"]
    assert balancing["routing_key"] == "traceID"
    hostnames = balancing["resolver"]["static"]["hostnames"]
    receivers = sorted(n for n in scale if n.startswith("receiver-"))
    scraped = yaml.safe_load((ROOT / "dashboards/prometheus/prometheus-scale.yml").read_text())
    targets = scraped["scrape_configs"][0]["static_configs"][0]["targets"]
    for name in receivers:
        service = services[name]
        command = service["command"]
        assert service["entrypoint"] == ["coordbench", "receiver"] and "--evaluate" in command
        http, grpc = command[command.index("--port") + 1], command[command.index("--grpc-port") + 1]
        assert f"{name}:{grpc}" in hostnames and f"{name}:{http}" in targets
        assert service["healthcheck"]["test"][-1] == f"http://127.0.0.1:{http}/healthz"
        peers = [command[i + 1] for i, part in enumerate(command) if part == "--peer"]
        assert peers == [f"http://{other}:{http}" for other in receivers if other != name]
        store = parse_store_url(command[command.index("--evaluations-store") + 1])
        assert (store.host, store.port, store.database, store.user) == ("clickhouse", 8123, database, user)
        assert service["environment"]["CLICKHOUSE_PASSWORD"] == password
        assert service["depends_on"]["clickhouse"]["condition"] == "service_healthy"
    assert sorted(hostnames) == [f"{n}:4317" for n in receivers] and sorted(targets) == [f"{n}:4318" for n in receivers]
    assert clickhouse["ports"] == ["8123:8123"]
    # the profile's Prometheus and Grafana: files `make dashboards` writes, data sources on the services' ports
    built = {f"./dashboards/{relative}" for relative in dashboard.files()} | {"./collector/scale.yaml"}
    for service in scale:
        for entry in services[service].get("configs", []):
            path = configs[entry["source"]]["file"]
            assert path in built and (ROOT / path).exists(), path
    sources = yaml.safe_load((ROOT / "dashboards/grafana/provisioning/datasources/scale.yaml").read_text())
    by_type = {s["type"]: s for s in sources["datasources"]}
    assert by_type["prometheus"]["url"] == "http://prometheus-scale:9090"
    ch = by_type["grafana-clickhouse-datasource"]
    assert (ch["jsonData"]["host"], ch["jsonData"]["port"], ch["jsonData"]["username"]) == ("clickhouse", 8123, user)
    assert ch["jsonData"]["defaultDatabase"] == database and ch["secureJsonData"]["password"] == "$CLICKHOUSE_PASSWORD"
    grafana = services["grafana-scale"]
    assert grafana["environment"]["GF_INSTALL_PLUGINS"] == "grafana-clickhouse-datasource"
    assert grafana["environment"]["CLICKHOUSE_PASSWORD"] == password
    board = json.loads((ROOT / "dashboards/grafana/dashboards/clickhouse.json").read_text())
    assert {p["datasource"]["uid"] for p in board["panels"]} == {CLICKHOUSE_UID} == {ch["uid"]}
    mounted = {e["target"] for e in grafana["configs"]}
    assert grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"] in mounted
