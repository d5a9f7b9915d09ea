"""A GIN index of the one- and two-character grams of a session's query and answer (PostgreSQL only),
so a search term too short for a trigram ("证书", "慢", "db") is answered from an index over every
date, not by scanning a window of days.

`selfeval_search_grams(query, answer)` upper-cases the text, keeps runs of letters, digits and CJK
ideographs, and returns every character and every pair of neighbours within a run: "证书过期" gives
证, 书, 过, 期, 证书, 书过, 过期. GIN keeps each distinct gram once per row. A text longer than
100,000 characters is read that far and marked with the gram "*": the search asks for the term's
gram or "*", so such a row is always a candidate and the LIKE recheck decides (never a missed
match). Its COST (about a tenth of a millisecond for a few hundred characters) makes the planner
evaluate it after the LIKE, on matching rows only, when it reads rows without the index. The
migration does nothing on SQLite (a scan of the small development table). Built
CONCURRENTLY, like the trigram indexes of 0008.
"""

from django.db import migrations

FUNCTION = r"""
CREATE OR REPLACE FUNCTION selfeval_search_grams(query text, answer text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT COST 1000 AS $$
DECLARE
    whole text := query || ' ' || answer;
    runs text := regexp_replace(upper(left(whole, 100000)), '[^0-9A-Z㐀-鿿豈-﫿]+', ' ', 'g');
    grams text[] := CASE WHEN length(whole) > 100000 THEN ARRAY['*'] ELSE '{}' END;
    previous text := ' ';
    c text;
BEGIN
    FOREACH c IN ARRAY string_to_array(runs, NULL) LOOP
        IF c <> ' ' THEN
            grams := grams || c;
            IF previous <> ' ' THEN
                grams := grams || (previous || c);
            END IF;
        END IF;
        previous := c;
    END LOOP;
    RETURN grams;
END
$$
"""
INDEX = "session_search_grams"


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(FUNCTION)
    schema_editor.execute(
        f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {INDEX} ON diagnosis_diagnosissession "
        "USING gin (selfeval_search_grams(query, answer))"
    )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")
    schema_editor.execute("DROP FUNCTION IF EXISTS selfeval_search_grams(text, text)")


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("diagnosis", "0013_session_conversation_and_error")]

    operations = [migrations.RunPython(create, drop, elidable=False)]
