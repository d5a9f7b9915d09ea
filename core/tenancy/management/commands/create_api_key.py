from django.core.management.base import BaseCommand, CommandParser

from core.tenancy.services import project_api_key_create


class Command(BaseCommand):
    help = "Create a project API key (and the project if needed); the key is printed once, only its hash is stored."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", required=True, help="project slug, e.g. acme-chat")
        parser.add_argument("--project-name", default="", help="display name when the project is created")
        parser.add_argument("name", help="a name for the key, e.g. the client that will use it")

    def handle(self, *args, **options) -> None:
        created = project_api_key_create(
            project_slug=options["project"], project_name=options["project_name"], key_name=options["name"]
        )
        if created.project_created:
            self.stderr.write(f"Created project {created.api_key.project.slug}")
        self.stderr.write(
            f"API key {created.api_key.name!r} (prefix {created.api_key.prefix}); store it now, it is not shown again:"
        )
        self.stdout.write(created.key)
