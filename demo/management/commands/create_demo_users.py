from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from demo.users import DEMO_ACCOUNTS, demo_users_ensure


class Command(BaseCommand):
    help = (
        "Create or reset the demo accounts admin (superuser), reviewer (Reviewer) and approver (Case approver) "
        "with fixed passwords, and print them. For a local demo database only."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--force", action="store_true", help="run even with DEBUG off (never on a real deployment)")

    def handle(self, *args, **options) -> None:
        if not settings.DEBUG and not options["force"]:
            raise CommandError(
                "Refusing to create accounts with published passwords while DEBUG is off; "
                "use createsuperuser, or --force on a throwaway database."
            )
        try:
            demo_users_ensure(set_passwords=True)
        except LookupError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write("Demo accounts (local use only):")
        for account in DEMO_ACCOUNTS:
            self.stdout.write(f"  {account.username:<9} / {account.password:<24} {account.role}")
