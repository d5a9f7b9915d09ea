import time
from argparse import BooleanOptionalAction

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from demo.enrichment import EnrichResult, demo_sessions_enrich, demo_sessions_evaluate
from demo.seeding import DEFAULT_PROJECTS, DEFER_INDEXES_FROM, DemoDataError, demo_sessions_seed

EVALUATE_UP_TO = 5000
VALIDATE_ALL_UP_TO = 5000
VALIDATE_SAMPLE = 1000


class Command(BaseCommand):
    help = (
        "Generate realistic, deterministic demo sessions (chat and AIOps, Chinese and English) covering every "
        "evidence case; the same --sessions and --seed give the same sessions, and a re-run skips existing ones."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--sessions", type=int, default=200, help="number of sessions (default 200)")
        parser.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
        parser.add_argument(
            "--project",
            action="append",
            dest="projects",
            metavar="SLUG",
            help="project slug; repeat for several. Chat sessions go to the 1st, 3rd, ... project, AIOps "
            f"sessions to the 2nd, 4th, ... (default: {' '.join(DEFAULT_PROJECTS)})",
        )
        parser.add_argument("--days", type=int, default=30, help="spread createdAt over the last D days (default 30)")
        parser.add_argument(
            "--evaluate",
            action=BooleanOptionalAction,
            default=None,
            help=f"run the real evaluation, feedback, case decisions and reviews (default: on up to {EVALUATE_UP_TO} sessions)",
        )
        parser.add_argument(
            "--bulk-only",
            action="store_true",
            help="raw mode for big benchmarks: no evaluation; evaluation columns filled with plausible values. "
            f"From {DEFER_INDEXES_FROM} sessions on PostgreSQL, indexes are rebuilt after the load: use a dedicated database",
        )
        parser.add_argument(
            "--validate",
            action=BooleanOptionalAction,
            default=None,
            help=f"check every payload with the ingestion serializer (default: all up to {VALIDATE_ALL_UP_TO} sessions, "
            f"else the first {VALIDATE_SAMPLE}, which cover every scenario)",
        )
        parser.add_argument("--batch-size", type=int, default=1000)

    def handle(self, *args, **options) -> None:
        count, days = options["sessions"], options["days"]
        if count < 0 or days < 1 or options["batch_size"] < 1:
            raise CommandError("--sessions must be >= 0, --days and --batch-size >= 1")
        projects = tuple(options["projects"] or DEFAULT_PROJECTS)
        bulk_only = options["bulk_only"]
        evaluate = options["evaluate"]
        if bulk_only and evaluate:
            raise CommandError("--bulk-only and --evaluate exclude each other")
        if evaluate is None:
            evaluate = not bulk_only and count <= EVALUATE_UP_TO
        validate = options["validate"]
        validate_below = None if validate or (validate is None and count <= VALIDATE_ALL_UP_TO) else VALIDATE_SAMPLE
        if validate is False:
            validate_below = 0
        # Whole minutes: two runs a few seconds apart generate identical timestamps.
        now = timezone.now().replace(second=0, microsecond=0)

        try:
            seeded = demo_sessions_seed(
                sessions=count,
                seed=options["seed"],
                now=now,
                days=days,
                project_slugs=projects,
                validate_below=validate_below,
                mirrored=bulk_only,
                batch_size=options["batch_size"],
                keep_sessions=evaluate,
                progress=self._progress("inserted") if count >= 20_000 else None,
            )
        except DemoDataError as exc:
            raise CommandError(str(exc)) from exc
        rate = seeded.created / seeded.seconds if seeded.seconds else 0.0
        self.stdout.write(
            f"Demo sessions: {seeded.created} created, {seeded.skipped} already there "
            f"({seeded.seconds:.1f}s, {rate:.0f} sessions/s) in projects {', '.join(projects)}"
        )
        if not evaluate or not seeded.created:
            if not bulk_only and seeded.created:
                self.stdout.write(
                    "Not evaluated (evaluation_state PENDING): run `manage.py evaluation_sweep` or workers."
                )
            return
        self._evaluate_and_enrich(seeded)

    def _evaluate_and_enrich(self, seeded) -> None:
        result = EnrichResult()
        started = time.perf_counter()
        demo_sessions_evaluate(
            session_pks=seeded.created_pks,
            result=result,
            progress=self._progress("evaluated") if len(seeded.created_pks) >= 1000 else None,
        )
        outcomes = ", ".join(f"{n} {state}" for state, n in sorted(result.evaluated.items())) or "none"
        self.stdout.write(f"Evaluated: {outcomes} ({time.perf_counter() - started:.1f}s)")
        for error in result.evaluation_errors:
            self.stderr.write(f"  evaluation error: {error}")
        demo_sessions_enrich(demos=seeded.sessions, session_pks=seeded.created_pks, result=result)
        for skipped in result.skipped:
            self.stderr.write(f"Skipped {skipped}")
        self.stdout.write(
            f"Feedback: {dict(result.feedback) or 'none'}; cases: {dict(result.cases) or 'none'}; "
            f"bad cases triaged: {result.bad_cases_triaged}; reviews: {result.reviews}; "
            f"claim corrections: {result.claim_corrections}; "
            f"evolution verifications: {result.verifications}"
        )

    def _progress(self, verb: str):
        started = time.perf_counter()

        def report(done: int, total: int) -> None:
            elapsed = time.perf_counter() - started
            self.stderr.write(f"  {done}/{total} {verb} ({elapsed:.0f}s)")

        return report
