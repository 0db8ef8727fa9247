"""Build back-translated paraphrase pairs: ``python jobs/backtranslate.py --config jobs/configs/backtranslate_slice.yaml``.

``--set key.path=value`` overrides a config value (repeatable), e.g. ``--set translation.actors=2``. Re-running with
the same config resumes: complete stages are skipped. Works the same under ``ray job submit``.
"""

import argparse
import logging
import sys

from parabit.cli import reports_user_errors
from parabit.config import load_config, parse_override
from parabit.pipeline import PipelineConfig, load_pipeline


@reports_user_errors
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="YAML file for parabit.pipeline.PipelineConfig")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config value")
    args = parser.parse_args(argv)
    config = load_config(PipelineConfig, args.config, dict(parse_override(text) for text in args.set))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    result = load_pipeline("backtranslate").run(config)
    for name, stage in result.stages.items():
        print(f"{name:>14}: {stage.rows_in:>7} in {stage.rows_out:>7} out {stage.rows_rejected:>7} rejected "
              f"{stage.seconds:>7.1f}s  {stage.reject_reasons}")
    print(f"training pairs: {result.output}\nMLflow run: {result.run_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
