-- The database the e2e test's Database view looks at (scripts/web-test.sh
-- loads it into a fresh database). Names and values that would run script
-- if a page ever treated them as HTML.
CREATE TABLE customers (id uuid PRIMARY KEY, name text);
CREATE TABLE orders (id uuid PRIMARY KEY, customer_id uuid, note text);
CREATE TABLE "<img src=x onerror=alert(1)>" (
  "<img src=x onerror=alert(1)>" uuid,
  doc jsonb
);
INSERT INTO customers VALUES
  ('01890a5d-ac96-774b-bcce-b302099a8057', 'first'),
  ('01890a5d-ac96-774b-bcce-b302099a8058', '<b>second</b>');
INSERT INTO orders VALUES
  ('01890a5d-ac97-7000-8000-000000000001', '01890a5d-ac96-774b-bcce-b302099a8057', 'see https://shop.example/o/01890a5d-ac96-774b-bcce-b302099a8057'),
  ('01890a5d-ac97-7000-8000-000000000002', '01890a5d-ac96-774b-bcce-b302099a8058', NULL);
INSERT INTO "<img src=x onerror=alert(1)>" VALUES
  ('01890a5d-ac96-774b-bcce-b302099a8057',
   '{"<script>alert(2)</script>": "01890a5d-ac96-774b-bcce-b302099a8057", "html": "<script>alert(3)</script>"}');
ANALYZE customers, orders, "<img src=x onerror=alert(1)>";
