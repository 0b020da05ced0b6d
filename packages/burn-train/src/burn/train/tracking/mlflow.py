"""`MlflowLogger`: a training run in an MLflow tracking store.

One `fit` is one MLflow run: the config as parameters, every numeric metric per step
(`train/Loss`, step: the split's update count) and per epoch (`train/epoch/Loss`, step: the
epoch), and at the end the trained model's record as an artifact (`model/model.mpk`) and the
run's status (finished, killed when interrupted, failed).

By default the store is local and needs no server: an SQLite database `mlflow.db` and an
`mlartifacts/` folder in the Learner's artifact folder (MLflow keeps its plain-folder store in
maintenance only and asks for a database; SQLite is one file). Look at it with
`mlflow ui --backend-store-uri sqlite:///ARTIFACT_DIR/mlflow.db`.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from burn.train.logger import Split
from burn.train.tracking.base import (
    ExperimentLogger,
    Hyperparameter,
    Scalar,
    TrackingError,
    require,
)

_STATUS = {"finished": "FINISHED", "interrupted": "KILLED", "failed": "FAILED"}
_BATCH = 1000  # MLflow's limit of metrics in one log_batch call


class MlflowLogger(ExperimentLogger):
    """Sends the Learner's numeric metrics, the config and the final model to MLflow.

    Args:
        tracking_uri: where the store is (`sqlite:///path.db`, `http://host:5000`, ...); by
            default `mlflow.db` in the Learner's artifact folder.
        experiment_name: the MLflow experiment, created when missing.
        run_name: the run's name (MLflow picks one when None).
        hyperparameters: the run's config or a mapping, logged as parameters.
        log_iterations: write every step's value too (default), not only epoch values.
        log_model: save the trained model's record as an artifact at the end.
        recorder: the recorder of that artifact (default: `burn.record.DefaultRecorder()`).
        artifact_location: where a new experiment keeps its artifacts. By default
            `mlartifacts/` in the Learner's artifact folder with the default store; with a
            `tracking_uri` of yours, the store's own default (for a local database MLflow's
            is `./mlruns` in the working directory).

    Needs `pip install "burn-train[mlflow]"`. `run_id` is set once the run has started.
    """

    def __init__(
        self,
        tracking_uri: str | None = None,
        experiment_name: str = "burn",
        run_name: str | None = None,
        hyperparameters: object = None,
        *,
        log_iterations: bool = True,
        log_model: bool = True,
        recorder: object = None,
        artifact_location: str | None = None,
    ):
        super().__init__(hyperparameters, log_iterations=log_iterations)
        require("mlflow", "mlflow")
        self._tracking_uri = tracking_uri
        self.experiment_name = experiment_name
        self.run_name = run_name
        self.log_model = log_model
        self.recorder = recorder
        self.artifact_location = artifact_location
        self.run_id: str | None = None
        self._client = None

    @property
    def tracking_uri(self) -> str:
        if self._tracking_uri is not None:
            return self._tracking_uri
        base = self.artifact_dir if self.artifact_dir is not None else Path.cwd()
        return f"sqlite:///{(base / 'mlflow.db').resolve()}"

    def _artifact_location(self) -> str | None:
        if self.artifact_location is not None:
            return self.artifact_location
        if self._tracking_uri is not None:
            return None  # the server's or the store's own default
        base = self.artifact_dir if self.artifact_dir is not None else Path.cwd()
        return (base / "mlartifacts").resolve().as_uri()

    # ------------------------------------------------------------------ ExperimentLogger
    def _open(self) -> None:
        from mlflow.tracking import MlflowClient

        try:
            client = MlflowClient(tracking_uri=self.tracking_uri)
            experiment = client.get_experiment_by_name(self.experiment_name)
            if experiment is None:
                experiment_id = client.create_experiment(
                    self.experiment_name, artifact_location=self._artifact_location()
                )
            else:
                experiment_id = experiment.experiment_id
            run = client.create_run(experiment_id, run_name=self.run_name)
        except Exception as error:
            raise TrackingError(
                f"MLflow store {self.tracking_uri!r}: cannot start a run in experiment "
                f"{self.experiment_name!r}: {error}"
            ) from error
        self._client = client
        self.run_id = run.info.run_id

    def _write_hyperparameters(self, flat: dict[str, Hyperparameter]) -> None:
        from mlflow.entities import Param

        params = [Param(key, str(value)) for key, value in flat.items()]
        for start in range(0, len(params), 100):  # MLflow's limit of params in one call
            self._client.log_batch(self.run_id, params=params[start : start + 100])

    def _write_scalars(self, split: Split, scope: str, scalars: list[Scalar]) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        infix = "/epoch/" if scope == "epoch" else "/"
        metrics = [
            Metric(f"{split.value}{infix}{item.name}", item.value, now, item.step)
            for item in scalars
        ]
        for start in range(0, len(metrics), _BATCH):
            self._client.log_batch(self.run_id, metrics=metrics[start : start + _BATCH])

    def _finish(self, model, status: str) -> None:
        client, run_id = self._client, self.run_id
        try:
            if self.log_model and status == "finished" and model is not None:
                self._log_model(client, run_id, model)
        finally:
            client.set_terminated(run_id, _STATUS.get(status, "FINISHED"))
            self._client = None

    def _log_model(self, client, run_id: str, model) -> None:
        recorder = self.recorder
        if recorder is None:
            from burn.record import DefaultRecorder

            recorder = DefaultRecorder()
        with tempfile.TemporaryDirectory() as folder:
            path = model.save_file(Path(folder) / "model", recorder)
            client.log_artifact(run_id, str(path), "model")

    def __repr__(self) -> str:
        return f"MlflowLogger({self.tracking_uri!r}, experiment_name={self.experiment_name!r})"
