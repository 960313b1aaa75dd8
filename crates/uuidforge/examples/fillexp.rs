use uuid::Uuid;
use uuidforge::generator::{
    GeneratorCell, GeneratorConfig, Randomness, SharedGenerator, V7Generator,
};
fn main() {
    for (name, r) in [
        ("csprng", Randomness::Csprng),
        ("insecure", Randomness::InsecureFast),
    ] {
        let mut g = V7Generator::new(GeneratorConfig {
            randomness: r,
            ..GeneratorConfig::default()
        })
        .unwrap();
        let mut buf = vec![Uuid::nil(); 1024];
        for _ in 0..1000 {
            g.fill(&mut buf).unwrap();
        }
        let n = 100_000;
        let t = std::time::Instant::now();
        for _ in 0..n {
            g.fill(&mut buf).unwrap();
            std::hint::black_box(&buf);
        }
        println!(
            "owned fill {name}: {:.2} ns",
            t.elapsed().as_nanos() as f64 / (n * 1024) as f64
        );
        let s = SharedGenerator::new(GeneratorConfig {
            randomness: r,
            ..GeneratorConfig::default()
        })
        .unwrap();
        let cell = GeneratorCell::new();
        let t = std::time::Instant::now();
        for _ in 0..n / 4 {
            s.fill_in(&cell, &mut buf).unwrap();
            std::hint::black_box(&buf);
        }
        println!(
            "shared fill_in {name}: {:.2} ns",
            t.elapsed().as_nanos() as f64 / (n / 4 * 1024) as f64
        );
    }
}
