// The estimate forms' fields, declared one by one: each names its place in the request body (`path`), its kind
// (`type`) and, for selects, where its values come from (`choices`: GET /v1/options; `options`: the catalog or a
// few values of the page's own). forms.js draws, reads and fills forms from these declarations.

export const MODEL_MODES = ["preset", "parameters", "shape", "hf"];

const model = (preset, request) => [
  { path: "model.preset", type: "select", options: "presets", value: preset, modes: ["preset"], wide: true, hint: true },
  { path: "model.architecture", type: "select", choices: request, modes: ["parameters"] },
  { path: "model.parameters", type: "count", modes: ["parameters"], placeholder: "7B", hint: true },
  { path: "model.flops_per_sample", type: "count", modes: ["parameters"], placeholder: "8.2e9", hint: true },
  { path: "model.architecture", type: "const", value: "transformer", modes: ["shape"] },
  { path: "model.layers", type: "int", modes: ["shape"], placeholder: "32" },
  { path: "model.hidden_size", type: "int", modes: ["shape"], placeholder: "4096" },
  { path: "model.attention_heads", type: "int", modes: ["shape"], placeholder: "32" },
  { path: "model.kv_heads", type: "int", modes: ["shape"], placeholder: "8" },
  { path: "model.ffn_hidden_size", type: "int", modes: ["shape"], placeholder: "11008" },
  { path: "model.ffn_type", type: "select", choices: request, auto: true, modes: ["shape"] },
  { path: "model.vocab_size", type: "int", modes: ["shape"], placeholder: "32000" },
  { path: "model.experts", type: "int", modes: ["shape"] },
  { path: "model.experts_per_token", type: "int", modes: ["shape"] },
  { path: "model.tied_embeddings", type: "bool", modes: ["shape"] },
  { path: "model.name", type: "text", modes: ["parameters", "shape"], wide: true },
  { path: "model.hf_config", type: "json", modes: ["hf"], wide: true, hint: true, placeholder: '{"model_type": "llama", …}' },
];

const COST = [
  { path: "cost.provider", type: "select", options: "providers", auto: "opt.cheapest" },
  { path: "cost.usd_per_accelerator_hour", type: "float", placeholder: "2.49", hint: true },
  { path: "cost.infrastructure_overhead", type: "percent", placeholder: "10", hint: true },
  { path: "cost.as_of", type: "date" },
];

export const TRAINING = [
  { id: "model", model: true, fields: model("llama-2-7b", "training") },
  {
    id: "training",
    fields: [
      { path: "training.tokens", type: "count", value: "1B", placeholder: "1B", hint: true },
      { path: "training.global_batch_size", type: "int", value: 64, hint: true },
      { path: "training.sequence_length", type: "int", value: 4096 },
      { path: "training.precision", type: "select", choices: "training", auto: true, hint: true },
      { path: "training.optimizer", type: "select", choices: "training", auto: true },
      { path: "training.activation_recomputation", type: "select", choices: "training", auto: true },
      { path: "training.framework", type: "select", choices: "training", auto: true },
      { path: "training.torch_compile", type: "bool" },
      { path: "training.micro_batch_size", type: "int" },
      { path: "training.samples", type: "count", hint: true },
      { path: "training.epochs", type: "float" },
    ],
  },
  {
    id: "hardware",
    fields: [
      { path: "hardware.accelerator", type: "select", options: "accelerators", value: "nvidia-h100-sxm-80gb", wide: true },
      { path: "hardware.count", type: "devices", value: 8, placeholder: "8 / auto", hint: "h.training_count" },
      { path: "constraints.deadline", type: "deadline", placeholder: "45", hint: true },
      // the layout: "auto" (the API's fastest layout for the count, the default) or the degrees written below
      { path: "hardware.parallelism", type: "select", options: ["auto", "manual"], value: "auto", layoutSwitch: true, wide: true,
        i18n: { auto: "opt.layout_auto", manual: "opt.layout_manual" } },
      { path: "hardware.parallelism.data", type: "int", layout: true },
      { path: "hardware.parallelism.tensor", type: "int", layout: true },
      { path: "hardware.parallelism.pipeline", type: "int", layout: true },
      { path: "hardware.parallelism.virtual_pipeline", type: "int", layout: true },
      { path: "hardware.parallelism.expert", type: "int", layout: true },
      { path: "hardware.parallelism.expert_overlap", type: "bool", layout: true },
      { path: "hardware.parallelism.expert_tensor", type: "int", layout: true },
      { path: "hardware.parallelism.zero_stage", type: "select", options: ["0", "1", "2", "3"], auto: true, number: true, layout: true, hint: true },
      { path: "hardware.parallelism.data_shard", type: "int", layout: true },
      { path: "hardware.parallelism.pipeline_schedule", type: "select", choices: "training", auto: true, layout: true },
      // automatic: on with tensor parallelism (the server's default), so a select, not a checkbox that cannot say "off"
      { path: "hardware.parallelism.sequence_parallel", type: "select", options: ["true", "false"], auto: true, bool: true,
        i18n: { true: "yes", false: "no" }, layout: true },
      { path: "hardware.utilization", type: "percent", hint: true },
    ],
  },
  { id: "cost", fields: COST },
  {
    id: "advanced",
    collapsed: true,
    fields: [
      { path: "training.validation.interval_steps", type: "int" },
      { path: "training.validation.tokens", type: "count" },
      { path: "training.checkpoint_interval_steps", type: "int" },
      { path: "training.straggler_share", type: "percent", placeholder: "7.8" },
      { path: "training.loss_chunks", type: "int", placeholder: "1" },
      { path: "training.checkpoint_write_bandwidth_bytes_per_s", type: "float", placeholder: "2e9", hint: true },
      { path: "training.include_pretraining", type: "bool" },
      { path: "training.pretraining_tokens", type: "count", hint: true },
      { path: "output.decimal_places", type: "int", placeholder: "1" },
      { path: "output.details", type: "bool" },
    ],
  },
];

export const INFERENCE = [
  { id: "model", model: true, fields: model("llama-3-8b", "inference") },
  {
    id: "weights",
    fields: [
      { path: "weights.precision", type: "select", choices: "inference", auto: true, hint: true },
      { path: "weights.format", type: "select", choices: "inference", auto: "opt.none" },
      { path: "kv_cache_precision", type: "select", choices: "inference", auto: true, hint: true },
      { path: "engine", type: "select", choices: "inference", auto: true },
    ],
  },
  {
    id: "workload",
    fields: [
      { path: "batch_size", type: "int", value: 1, hint: true },
      { path: "prompt_tokens", type: "int", value: 512 },
      { path: "output_tokens", type: "int", value: 256 },
      { path: "workload.requests_per_second", type: "float" },
      { path: "serving.scheduler", type: "select", choices: "inference", auto: true },
      { path: "serving.speculative.method", type: "select", choices: "inference", auto: "opt.none" },
    ],
  },
  {
    id: "inference_hardware",
    fields: [
      { path: "hardware.accelerator", type: "select", options: "accelerators", value: "nvidia-l40s", wide: true },
      { path: "hardware.count", type: "devices", value: 1, placeholder: "1 / auto", hint: true },
      { path: "output.suggestions", type: "bool", value: true, sendFalse: true, wide: true },
    ],
  },
  {
    id: "targets",
    collapsed: true,
    fields: [
      { path: "targets.output_tokens_per_second", type: "float" },
      { path: "targets.time_to_first_token_s", type: "float" },
      { path: "targets.time_per_output_token_s", type: "float" },
      { path: "slo.percentile", type: "select", choices: "inference", auto: true },
    ],
  },
  { id: "cost", fields: COST },
  {
    id: "advanced",
    collapsed: true,
    fields: [
      { path: "output.decimal_places", type: "int", placeholder: "1" },
      { path: "output.details", type: "bool" },
    ],
  },
];

export const PRICE = [
  { id: "price", bare: true, fields: [
    { path: "provider", type: "text", placeholder: "aws", list: "providers", required: true },
    { path: "usd_per_hour", type: "float", placeholder: "2.49", required: true },
    { path: "pricing_model", type: "select", choices: "price", auto: true },
    { path: "instance_type", type: "text", placeholder: "p5.48xlarge" },
    { path: "region", type: "text", placeholder: "us-east-1" },
    { path: "effective_from", type: "date" },
    { path: "source", type: "text", wide: true },
  ] },
];
