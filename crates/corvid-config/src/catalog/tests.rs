use super::*;

#[test]
fn the_shipped_catalog_reads_and_holds_every_preset_family() {
    let shipped = Catalog::parse(CATALOG).expect("catalog.toml is valid");
    assert_eq!(shipped.models().len(), catalog().models().len());
    for provider in ["xai", "anthropic", "openai", "gemini"] {
        assert!(
            shipped
                .models()
                .iter()
                .any(|model| model.provider == provider),
            "no {provider} model in the catalog"
        );
    }
    for model in shipped.models() {
        let window = model.context_window.expect("every model states its window");
        assert!(
            model.max_input.is_none_or(|input| input <= window),
            "{}",
            model.id
        );
        let price = model.price.expect("every shipped model is priced");
        assert!(price.output >= price.input, "{}", model.id);
        assert!(price.cached_input <= price.input, "{}", model.id);
    }
}

#[test]
fn a_model_is_found_by_its_name_its_snapshots_and_a_provider_prefix() {
    let sonnet = catalog().model("claude-sonnet-4-5").unwrap();
    assert_eq!(sonnet.provider, "anthropic");
    assert_eq!(sonnet.context_window, Some(200_000));
    assert_eq!(sonnet.max_output, Some(64_000));
    assert!(sonnet.tools && sonnet.images && sonnet.reasoning);
    for name in [
        "claude-sonnet-4-5-20250929",
        "anthropic/claude-sonnet-4-5",
        "Claude-Sonnet-4-5",
    ] {
        assert_eq!(
            catalog().model(name).map(|model| &model.id),
            Some(&sonnet.id),
            "{name}"
        );
    }
    assert_eq!(
        catalog().model("claude-opus-4-20250514").unwrap().id,
        "claude-opus-4-0"
    );
    assert_eq!(catalog().model("gpt-4o-2024-08-06").unwrap().id, "gpt-4o");
    assert_eq!(
        catalog().model("models/gemini-2.5-pro").unwrap().id,
        "gemini-2.5-pro"
    );
    assert_eq!(catalog().model("grok-4-0709").unwrap().id, "grok-4");
    assert_eq!(
        catalog().model("grok-4-fast-non-reasoning").unwrap().id,
        "grok-4-fast"
    );
    assert_eq!(catalog().model("gpt-5-mini").unwrap().id, "gpt-5-mini");
    // A model it lacks is not guessed from a neighbour.
    assert_eq!(catalog().model("gpt-5.9"), None);
    assert_eq!(catalog().model("qwen2.5-coder:7b"), None);
}

#[test]
fn prices_default_cache_rates_to_input_and_the_input_limit_to_the_window() {
    let catalog = Catalog::parse(
        "[openai]\n\"m\" = { context = 400_000, max_input = 272_000, input = 1.0, output = 8.0 }\n\
         \"w\" = { context = 1_000 }\n",
    )
    .unwrap();
    let m = catalog.model("m").unwrap();
    assert_eq!(
        m.price,
        Some(Price {
            input: 1.0,
            cached_input: 1.0,
            cache_write: 1.0,
            output: 8.0
        })
    );
    assert_eq!(m.input_limit(), Some(272_000));
    let w = catalog.model("w").unwrap();
    assert_eq!((w.price, w.input_limit()), (None, Some(1_000)));
    assert!(Catalog::parse("[x]\n\"m\" = { windw = 3 }\n").is_err());
}
