use uuid::Uuid;
use uuidforge::generator::{GeneratorConfig, V7Generator};
fn main() {
    let mut g = V7Generator::new(GeneratorConfig::default()).unwrap();
    let mut buf = vec![Uuid::nil(); 1024];
    for _ in 0..400_000 {
        g.fill(&mut buf).unwrap();
        std::hint::black_box(&buf);
    }
}
