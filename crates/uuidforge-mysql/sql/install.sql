-- The uuidforge functions for MariaDB (and MySQL), from the library
-- libuuidforge_mysql.so in the server's plugin_dir (the Debian package
-- mariadb-plugin-uuidforge puts it in /usr/lib/mysql/plugin). Run once per
-- server, as a user with INSERT on mysql.func:
--   mariadb < /usr/share/uuidforge-mariadb/install.sql
CREATE FUNCTION IF NOT EXISTS uuidv7 RETURNS STRING SONAME 'libuuidforge_mysql.so';
CREATE FUNCTION IF NOT EXISTS uuidv7_bin RETURNS STRING SONAME 'libuuidforge_mysql.so';
CREATE FUNCTION IF NOT EXISTS uuidv7_at RETURNS STRING SONAME 'libuuidforge_mysql.so';
CREATE FUNCTION IF NOT EXISTS uuidv7_from RETURNS STRING SONAME 'libuuidforge_mysql.so';
CREATE FUNCTION IF NOT EXISTS uuid_v7_timestamp RETURNS STRING SONAME 'libuuidforge_mysql.so';
CREATE FUNCTION IF NOT EXISTS uuidv7_lower RETURNS STRING SONAME 'libuuidforge_mysql.so';
CREATE FUNCTION IF NOT EXISTS uuidv7_upper RETURNS STRING SONAME 'libuuidforge_mysql.so';
CREATE FUNCTION IF NOT EXISTS uuid_to_rfc_bin RETURNS STRING SONAME 'libuuidforge_mysql.so';
CREATE FUNCTION IF NOT EXISTS uuid_to_swapped_bin RETURNS STRING SONAME 'libuuidforge_mysql.so';
CREATE FUNCTION IF NOT EXISTS uuid_from_rfc_bin RETURNS STRING SONAME 'libuuidforge_mysql.so';
CREATE FUNCTION IF NOT EXISTS uuid_from_swapped_bin RETURNS STRING SONAME 'libuuidforge_mysql.so';
