//! Constraint and `when` expressions, parsed once by evalexpr and evaluated against the
//! values of one (partial) point without building a map per evaluation.

use std::collections::HashMap;

use evalexpr::{Context, DefaultNumericTypes, EvalexprError, EvalexprResult, Node};
use results::Value;

type EValue = evalexpr::Value<DefaultNumericTypes>;

/// A parsed expression and the parameters it reads.
#[derive(Debug, Clone)]
pub(crate) struct Expr {
    pub text: String,
    node: Node<DefaultNumericTypes>,
    /// Indexes (into the space's distinct names) of the parameters read.
    pub params: Vec<usize>,
}

/// Why an expression could not be used.
pub(crate) enum ExprError {
    Parse(String),
    Unknown(String),
}

impl Expr {
    /// Parses `text`; every variable must be a parameter (in `names`) or a constant.
    pub fn parse(
        text: &str,
        names: &HashMap<String, usize>,
        constants: &HashMap<String, EValue>,
    ) -> Result<Expr, ExprError> {
        let node = evalexpr::build_operator_tree::<DefaultNumericTypes>(text)
            .map_err(|e| ExprError::Parse(e.to_string()))?;
        let mut params = Vec::new();
        for var in node.iter_read_variable_identifiers() {
            if let Some(&i) = names.get(var) {
                if !params.contains(&i) {
                    params.push(i);
                }
            } else if !constants.contains_key(var) {
                return Err(ExprError::Unknown(var.to_string()));
            }
        }
        // Assignments would let a constraint change the point it judges.
        if node.iter_write_variable_identifiers().next().is_some() {
            return Err(ExprError::Parse(
                "assignments are not allowed in expressions".into(),
            ));
        }
        Ok(Expr {
            text: text.to_string(),
            node,
            params,
        })
    }

    /// Evaluates to a boolean; `Err` carries evalexpr's message or says what else came out.
    pub fn eval(&self, env: &Env<'_>) -> Result<bool, String> {
        match self.node.eval_with_context(env) {
            Ok(EValue::Boolean(b)) => Ok(b),
            Ok(other) => Err(format!("is not boolean: it evaluates to {other}")),
            Err(e) => Err(format!("cannot be evaluated: {e}")),
        }
    }
}

/// Converts a point value for evalexpr.
pub(crate) fn to_evalexpr(v: &Value) -> EValue {
    match v {
        Value::Int(i) => EValue::Int(*i),
        Value::Text(t) => EValue::String(t.clone()),
    }
}

/// Variables for evaluation: the current values of the parameters (by name index) and the
/// constants.
pub(crate) struct Env<'a> {
    pub names: &'a HashMap<String, usize>,
    pub values: &'a [Option<EValue>],
    pub constants: &'a HashMap<String, EValue>,
}

impl Context for Env<'_> {
    type NumericTypes = DefaultNumericTypes;

    fn get_value(&self, identifier: &str) -> Option<&EValue> {
        match self.names.get(identifier) {
            Some(&i) => self.values.get(i).and_then(Option::as_ref),
            None => self.constants.get(identifier),
        }
    }

    fn call_function(&self, identifier: &str, _argument: &EValue) -> EvalexprResult<EValue> {
        Err(EvalexprError::FunctionIdentifierNotFound(
            identifier.to_string(),
        ))
    }

    fn are_builtin_functions_disabled(&self) -> bool {
        false
    }

    fn set_builtin_functions_disabled(&mut self, disabled: bool) -> EvalexprResult<()> {
        if disabled {
            Err(EvalexprError::BuiltinFunctionsCannotBeDisabled)
        } else {
            Ok(())
        }
    }
}
