-- ensure the extension loads correctly
CREATE EXTENSION "pg_uuidv7";
